"""Where a program finds its API key: a ``data/api-keys``-style file, or an environment variable.

The server reads its keys from such a file (``--api-keys-file``, or ``DATA_DIR/api-keys``, which
its first start creates for app ``default``): one ``APP_ID:KEY`` a line, ``#`` comments and blank
lines ignored. The helpers here read the same format with the server's rules, so a key that
loads here is one the server could have loaded, and return it as HELLO takes it: ``APP_ID:KEY``.

Every client tool of the project (this client, ``rpc-probe``) reads its key from one variable,
``MODERATION_CLIENT_API_KEY`` (``APP_ID:KEY``, or a bare key). This client also reads the keys
file that ``MODERATION_CLIENT_API_KEY_FILE`` names, and the older names ``MRPC_API_KEY`` and
``MRPC_API_KEY_FILE`` when neither new one is set.
"""

from __future__ import annotations

import os
import re
from typing import List, Optional, Tuple, Union

#: The variable ``api_key_from_env`` reads by default; ``<NAME>_FILE`` names a keys file instead.
DEFAULT_KEY_VARIABLE = "MODERATION_CLIENT_API_KEY"
#: Older names of ``DEFAULT_KEY_VARIABLE``, read (with their ``_FILE`` twins) when it is unset.
KEY_VARIABLE_ALIASES = ("MRPC_API_KEY",)

_APP_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def read_api_key(path: Union[str, "os.PathLike[str]"] = "data/api-keys", app_id: Optional[str] = None) -> str:
    """The key of ``app_id`` in the keys file at ``path``, as ``APP_ID:KEY``.

    A file may hold several keys of one app (a rotation appends the new one): the last is taken.
    Without ``app_id`` the file must hold keys of one app only. Raises ``OSError`` when the file
    cannot be read and ``ValueError`` naming the file (and line) when a line is not ``APP_ID:KEY``
    as the server takes it, or when the file has no key for the app.
    """
    with open(path, encoding="utf-8") as file:
        text = file.read()
    entries: List[Tuple[str, str]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        app, colon, key = line.partition(":")
        if not colon or not _APP_ID.fullmatch(app) or len(key) < 8 or any(c.isspace() for c in key):
            raise ValueError("%s, line %d: expected APP_ID:KEY (an app id of 1–64 characters of "
                             "[A-Za-z0-9_.-], a key of 8 or more characters without spaces)" % (path, number))
        entries.append((app, key))
    apps = sorted({app for app, _ in entries})
    if app_id is None:
        if len(apps) > 1:
            raise ValueError("%s holds keys of apps %s: name one with app_id=" % (path, ", ".join(apps)))
        chosen = entries
    else:
        chosen = [entry for entry in entries if entry[0] == app_id]
    if not chosen:
        if app_id is None:
            raise ValueError("%s has no key" % path)
        raise ValueError("%s has no key for app %r (it has keys of: %s)" % (path, app_id, ", ".join(apps) or "none"))
    app, key = chosen[-1]
    return "%s:%s" % (app, key)


def lookup_api_key(variable: Optional[str] = None, app_id: Optional[str] = None) -> Optional[str]:
    """The API key the environment gives, or None when it gives none.

    Without ``variable``: ``MODERATION_CLIENT_API_KEY`` (bare or ``APP_ID:KEY``, used as it is),
    else the keys file ``MODERATION_CLIENT_API_KEY_FILE`` names (read with ``read_api_key``),
    else the same under the older name ``MRPC_API_KEY`` and ``MRPC_API_KEY_FILE``: anything set
    under the new name wins. With ``variable``: that variable, else its ``<variable>_FILE`` twin.
    An empty variable counts as unset; a keys file that cannot be read raises."""
    names = (variable,) if variable else (DEFAULT_KEY_VARIABLE,) + KEY_VARIABLE_ALIASES
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
        path = os.environ.get(name + "_FILE", "").strip()
        if path:
            return read_api_key(path, app_id)
    return None


def api_key_from_env(variable: Optional[str] = None, app_id: Optional[str] = None) -> str:
    """The API key the environment gives (see ``lookup_api_key``: ``MODERATION_CLIENT_API_KEY``,
    its ``_FILE`` twin, then the older ``MRPC_API_KEY`` and its twin; or ``variable`` and its
    twin). Raises ``ValueError`` naming the variables when none is set."""
    key = lookup_api_key(variable, app_id)
    if key is not None:
        return key
    if variable:
        raise ValueError("no API key: set %s to APP_ID:KEY, or %s_FILE to a keys file such as the server's "
                         "data/api-keys (or pass api_key=)" % (variable, variable))
    raise ValueError("no API key: set %s to APP_ID:KEY, or %s_FILE to a keys file such as the server's "
                     "data/api-keys (or pass api_key=); the older %s are read too"
                     % (DEFAULT_KEY_VARIABLE, DEFAULT_KEY_VARIABLE,
                        " and ".join("%s, %s_FILE" % (name, name) for name in KEY_VARIABLE_ALIASES)))
