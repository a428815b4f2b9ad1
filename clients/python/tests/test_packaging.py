"""The package as a user gets it: ``python -m build`` makes an sdist and a wheel offline, the wheel
installs and imports outside the source tree, and its types reach a type checker (``py.typed``,
protoc's ``.pyi`` for every message module) so that mypy sees each stub method's request and
response classes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from typing import Dict, Iterator, List

import pytest

import mrpc_client

PACKAGE_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))


def run(arguments: List[str], cwd: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs a command with an environment that cannot see the source tree (no PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(arguments, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    """``python -m build --no-isolation`` over a copy of clients/python (so no build/ or
    egg-info lands in the tree): the sdist, then the wheel built from that sdist."""
    work = tmp_path_factory.mktemp("packaging")
    source = str(work / "mrpc-client")
    shutil.copytree(PACKAGE_DIR, source, ignore=shutil.ignore_patterns("__pycache__", "build", "dist", "*.egg-info"))
    result = run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), source],
                 cwd=str(work))
    assert result.returncode == 0, "python -m build failed (tools/setup installs build and wheel):\n%s%s" % (
        result.stdout[-3000:], result.stderr[-3000:])
    names = sorted(os.listdir(work / "dist"))
    version = mrpc_client.__version__
    wheel = "mrpc_client-%s-py3-none-any.whl" % version
    # setuptools 69.3 and later name the sdist as PEP 625 says (mrpc_client-…), older ones mrpc-client-….
    sdists = {"mrpc-client-%s.tar.gz" % version, "mrpc_client-%s.tar.gz" % version}
    assert len(names) == 2 and wheel in names and set(names) - {wheel} <= sdists, names
    return {"work": str(work), "wheel": str(work / "dist" / wheel)}


@pytest.fixture(scope="module")
def venv(built: Dict[str, str]) -> Iterator[str]:
    """A virtual environment with the wheel installed, and protobuf (and its type stubs) from the
    environment running the tests. ``--system-site-packages`` would not do: the tests run in a
    venv of their own (clients/python/run-tests), and that option gives the base interpreter's
    packages instead, so a ``.pth`` file, written once the wheel is installed, names this
    environment's site-packages: plain paths, appended after the venv's own, so the wheel's
    ``mrpc_client`` is the one imported."""
    path = os.path.join(built["work"], "venv")
    result = run([sys.executable, "-m", "venv", path], cwd=built["work"])
    assert result.returncode == 0, result.stderr
    python = os.path.join(path, "bin", "python")
    result = run([python, "-m", "pip", "install", "--no-index", "--no-deps", "-q", built["wheel"]], cwd=built["work"])
    assert result.returncode == 0, result.stdout + result.stderr
    result = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=built["work"])
    assert result.returncode == 0, result.stderr
    ours = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    with open(os.path.join(result.stdout.strip(), "outer-environment.pth"), "w") as file:
        file.write("".join(directory + "\n" for directory in ours))
    yield python


def test_the_wheel_holds_the_package_its_types_and_its_dependency(built: Dict[str, str]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        files = set(wheel.namelist())
        metadata = wheel.read("mrpc_client-%s.dist-info/METADATA" % mrpc_client.__version__).decode()
    assert "mrpc_client/py.typed" in files
    generated = [name for name in files if name.endswith("_pb2.py")]
    assert len(generated) == 14, generated
    for module in generated:
        assert module + "i" in files, "no type stub for %s" % module
    for module in ("moderation_v1", "mrpc_v1", "mrpc_health_v1", "mrpc_diagnostics_v1", "mrpc_reflection_v1",
                   "channel", "multicallable", "gen/services"):
        assert "mrpc_client/%s.py" % module in files
    # The wheel requires what pyproject.toml declares (setuptools versions order the specifiers
    # differently, so they are compared as sets).
    with open(os.path.join(PACKAGE_DIR, "pyproject.toml")) as file:
        declared = re.search(r'^dependencies = \["protobuf([^"]*)"\]$', file.read(), re.M)
    assert declared, "pyproject.toml declares no protobuf dependency"
    required = re.findall(r"^Requires-Dist: protobuf ?\(?([^;()\n]*)\)?$", metadata, re.M)
    assert len(required) == 1, metadata
    assert set(required[0].replace(" ", "").split(",")) == set(declared.group(1).split(",")), required
    assert not any(name.startswith("tests/") or "__pycache__" in name for name in files)


def test_the_installed_wheel_imports_outside_the_source_tree(venv: str, built: Dict[str, str]) -> None:
    program = textwrap.dedent("""
        import mrpc_client
        from mrpc_client import moderation_v1 as m
        stub = m.ModerationStub(mrpc_client.insecure_channel("127.0.0.1:7600", api_key="app:key-123456"))
        print(mrpc_client.__file__)
        print(mrpc_client.__version__, stub.KickMember.path, m.ActionType.Name(m.ACTION_TYPE_KICKED))
    """)
    result = run([venv, "-I", "-c", program], cwd=built["work"])
    assert result.returncode == 0, result.stderr
    location, summary = result.stdout.strip().split("\n")
    assert location.startswith(os.path.dirname(os.path.dirname(venv))), location
    assert summary == "%s /moderation.v1.Moderation/KickMember ACTION_TYPE_KICKED" % mrpc_client.__version__


USER_PROGRAM = '''
import mrpc_client
from mrpc_client import moderation_v1 as m

channel = mrpc_client.insecure_channel("127.0.0.1:7600", api_key="app:key-123456")
stub = m.ModerationStub(channel)
response = stub.KickMember(m.KickMemberRequest(guid="g1", uid="u2"), timeout=2, metadata=[("x-on-behalf-of", "u1")])
reveal_type(response)
reveal_type(response.action.seq)
reveal_type(stub.BanMember.future(m.BanMemberRequest()))
for event in stub.Subscribe(m.SubscribeRequest(whole_app=True)):
    reveal_type(event.action)
try:
    pass
except mrpc_client.RpcError as error:
    reveal_type(error.code())
    reveal_type(error.last_seq)
stub.KickMember(m.BanMemberRequest())
stub.KickMember(m.KickMemberRequest(), timeout="2")
'''


def test_a_type_checker_sees_each_methods_request_and_response_classes(venv: str, built: Dict[str, str]) -> None:
    program = os.path.join(built["work"], "user_program.py")
    with open(program, "w") as file:
        file.write(USER_PROGRAM)
    result = run([sys.executable, "-m", "mypy", "--no-error-summary", "--python-executable", venv,
                  "--cache-dir", os.path.join(built["work"], "mypy"), program], cwd=built["work"])
    lines = [line.split(": ", 1)[1] for line in result.stdout.strip().split("\n") if ": " in line]
    # Patterns, not strings: mypy versions spell builtins and unions differently.
    expected = [
        r'note: Revealed type is "mrpc_client\.gen\.moderation\.v1\.moderation_pb2\.KickMemberResponse"',
        r'note: Revealed type is "(builtins\.)?int"',
        r'note: Revealed type is "concurrent\.futures\._base\.Future\[mrpc_client\.gen\.moderation\.v1\.'
        r'moderation_pb2\.BanMemberResponse\]"',
        r'note: Revealed type is "mrpc_client\.gen\.moderation\.v1\.actions_pb2\.Action"',
        r'note: Revealed type is "mrpc_client\.status\.StatusCode"',
        r'note: Revealed type is "(Union\[builtins\.int, None\]|int \| None)"',
        r'error: Argument 1 to "__call__" of "UnaryUnaryMultiCallable" has incompatible type "BanMemberRequest"; '
        r'expected "KickMemberRequest"',
        r'error: Argument "timeout" to "__call__" of "UnaryUnaryMultiCallable" has incompatible type "str"; '
        r'expected "(Optional\[float\]|float \| None)"',
    ]
    assert len(lines) == len(expected), result.stdout + result.stderr
    for line, pattern in zip(lines, expected):
        assert re.match(pattern, line), "%r does not match %r" % (line, pattern)


def test_the_package_itself_type_checks() -> None:
    result = run([sys.executable, "-m", "mypy", "--no-error-summary", "--config-file",
                  os.path.join(PACKAGE_DIR, "pyproject.toml"), "-p", "mrpc_client"],
                 cwd=os.path.join(PACKAGE_DIR, "src"))
    assert result.returncode == 0, result.stdout + result.stderr
