"""The Python examples of docs/CLIENTS.md (its Python section) and of clients/python/README.md,
run as written: in order, in one Python process per document, in a folder holding the server's
keys file as ``tools/run`` leaves it (``data/api-keys``, app ``default``), against a server of
their own with an empty store. Only the address is changed (``127.0.0.1:7600`` → the server's).
A block after ``<!-- test_docs: not run (why) -->`` is not run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Iterator, List, Tuple

import pytest

from mrpc_client.testing import ServerProcess

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
KEY = "default:docs-example-key-0123456789"
ADDRESS = "127.0.0.1:7600"
BLOCK = re.compile(r"(<!-- test_docs: not run[^\n]*-->\n)?```python\n(.*?)```", re.S)


def python_blocks(path: str, section: str = "") -> List[str]:
    """The ```python blocks of ``path`` (of its ``section`` only, when named) that are to be run."""
    with open(path) as file:
        text = file.read()
    if section:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        text = text[start:end if end >= 0 else len(text)]
    return [code for skip, code in BLOCK.findall(text) if not skip]


@pytest.fixture
def docs_server(server_binary: str, tmp_path) -> Iterator[Tuple[ServerProcess, str]]:
    """A server with an empty store, and a folder whose data/api-keys holds its key."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "api-keys").write_text("# API keys of this server, one APP_ID:KEY a line.\n%s\n" % KEY)
    server = ServerProcess(server_binary, str(data), KEY, str(tmp_path / "server.log"),
                           extra_args=["--api-keys-file", str(data / "api-keys")])
    yield server, str(tmp_path)
    server.terminate()


def run_examples(blocks: List[str], server: ServerProcess, folder: str) -> str:
    script = "\n\n".join(blocks)
    assert ADDRESS in script
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MRPC_API_KEY") and not k.startswith("MODERATION_CLIENT_API_KEY")}
    env["MODERATION_CLIENT_API_KEY_FILE"] = "data/api-keys"  # as the section says to export after tools/run
    result = subprocess.run([sys.executable, "-c", script.replace(ADDRESS, server.address)], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, "the examples failed:\n%s\n%s" % (result.stdout, result.stderr)
    return result.stdout


def test_the_examples_of_clients_md_run_as_written(docs_server: Tuple[ServerProcess, str]) -> None:
    blocks = python_blocks(os.path.join(ROOT, "docs", "CLIENTS.md"), "## Python: `clients/python`")
    assert len(blocks) == 7, "the section's runnable examples: %d" % len(blocks)
    out = run_examples(blocks, *docs_server).split("\n")
    assert out[0] == "4194304"
    assert re.fullmatch(r"\d+ ACTION_TYPE_KICKED 1", out[1]), out[1]
    assert out[2] == "Alice"  # the call with its own key in authorization metadata
    assert out[3:7] == ["StatusCode.FAILED_PRECONDITION", "FAILED_PRECONDITION", "ERR_NOT_A_MEMBER",
                        out[6]] and "bob" in out[6] and "g1" in out[6]
    assert out[7:9] == ["{}", "False False"]
    assert out[9:11] == ["9 ERR_NOT_A_MEMBER moderation.v1", "Alice StatusCode.OK ()"]  # from_call, with_call
    assert out[11] == str(sum(len(b"%d" % i) for i in range(1000)))
    events = [line.split(" ", 1)[1] for line in out[12:] if line]
    assert events == ["ACTION_TYPE_CREATED alice", "ACTION_TYPE_JOINED bob", "ACTION_TYPE_KICKED bob"], out[12:]


def test_the_example_of_the_package_readme_runs_as_written(docs_server: Tuple[ServerProcess, str]) -> None:
    blocks = python_blocks(os.path.join(ROOT, "clients", "python", "README.md"))
    assert len(blocks) == 1
    out = run_examples(blocks, *docs_server).strip()
    # Nobody is there yet: the server refuses with a code, an ERR_… code and a message.
    assert re.fullmatch(r"[A-Z_]+ ERR_[A-Z_]+ .+", out), out
