"""TLS settings of a secure channel, made the way grpcio makes them: ``ssl_channel_credentials``."""

from __future__ import annotations

import os
import ssl
import tempfile
from typing import Optional

from .tls import ALPN_PROTOCOL


class ChannelCredentials:
    """What ``secure_channel`` speaks TLS with: an ``ssl.SSLContext``, made once per channel.

    Make one with ``ssl_channel_credentials`` (grpcio's arguments), or wrap a context of your own
    (``ChannelCredentials(context)``: full control; it should offer ALPN "mrpc/1", though the
    server does not require it).
    """

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        if not isinstance(ssl_context, ssl.SSLContext):
            raise TypeError("ChannelCredentials takes an ssl.SSLContext, got %r" % (ssl_context,))
        self.ssl_context = ssl_context


def ssl_channel_credentials(root_certificates: Optional[bytes] = None, private_key: Optional[bytes] = None,
                            certificate_chain: Optional[bytes] = None) -> ChannelCredentials:
    """TLS 1.2 or later with ALPN "mrpc/1", as ``grpc.ssl_channel_credentials`` takes it (PEM bytes).

    The server's certificate is checked against ``root_certificates`` (None: the system's CAs),
    and its name against the address's host (or the channel's ``server_hostname``).
    ``certificate_chain`` and ``private_key`` are a client certificate for a server that asks for
    one (``--tls-client-ca``). PEM that does not load is a ``ValueError`` naming the argument.
    """
    try:
        context = ssl.create_default_context(
            cadata=None if root_certificates is None else _text("root_certificates", root_certificates))
    except ssl.SSLError as error:
        raise ValueError("root_certificates do not load as PEM certificates: %s" % error) from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols([ALPN_PROTOCOL])
    if private_key is not None or certificate_chain is not None:
        if private_key is None or certificate_chain is None:
            raise ValueError("a client certificate needs both certificate_chain and private_key")
        _load_client_certificate(context, _text("certificate_chain", certificate_chain),
                                 _text("private_key", private_key))
    return ChannelCredentials(context)


def _text(name: str, pem: bytes) -> str:
    if not isinstance(pem, bytes):
        raise TypeError("%s must be PEM bytes (as grpcio takes them), got %s" % (name, type(pem).__name__))
    try:
        return pem.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError("%s is not PEM: it is not ASCII text" % name) from None


def _load_client_certificate(context: ssl.SSLContext, chain: str, key: str) -> None:
    """``ssl`` loads a certificate and key from files only: they go through a directory only this
    user can read, removed at once."""
    with tempfile.TemporaryDirectory(prefix="mrpc-client-cert-") as directory:
        paths = []
        for name, text in (("chain.pem", chain), ("key.pem", key)):
            path = os.path.join(directory, name)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
                file.write(text)
            paths.append(path)
        try:
            context.load_cert_chain(paths[0], paths[1])
        except ssl.SSLError as error:
            raise ValueError("certificate_chain and private_key do not load as a PEM certificate and its key: %s"
                             % error) from None
