"""Generates the Python messages and gRPC stubs of moderation.v1 from proto/ with grpcio-tools.

    python gen_stubs.py OUT_DIR

runs ``grpc_tools.protoc -Iproto --python_out=OUT_DIR --grpc_python_out=OUT_DIR
proto/moderation/v1/*.proto`` — exactly what a team using stock gRPC would run — and checks that
the result imports. Nothing it writes is committed: tests/grpc/run-tests generates into a fresh
temporary directory at every run (and conftest.py does the same when pytest is run by hand).

Only moderation/v1 is generated: the health and reflection messages come with
grpcio-health-checking and grpcio-reflection, google.rpc's with googleapis-common-protos (the
same protos as the ones vendored under proto/, which a Python tree must not generate again: a
generated ``grpc/`` package would shadow grpcio itself).
"""

from __future__ import annotations

import glob
import importlib
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTO_DIR = os.path.join(ROOT, "proto")
MODULES = ["moderation.v1.%s_pb2" % name for name in ("users", "members", "groups", "actions", "errors", "moderation")]
MODULES.append("moderation.v1.moderation_pb2_grpc")


def generate(out_dir: str) -> None:
    """Writes the stubs into ``out_dir``; raises RuntimeError when protoc fails."""
    from grpc_tools import protoc  # grpcio-tools
    import grpc_tools

    os.makedirs(out_dir, exist_ok=True)
    sources = sorted(glob.glob(os.path.join(PROTO_DIR, "moderation", "v1", "*.proto")))
    if not sources:
        raise RuntimeError("no .proto files under %s/moderation/v1" % PROTO_DIR)
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = ["grpc_tools.protoc", "-I" + PROTO_DIR, "-I" + well_known,
            "--python_out=" + out_dir, "--grpc_python_out=" + out_dir] + sources
    status = protoc.main(args)
    if status != 0:
        raise RuntimeError("grpc_tools.protoc failed (exit %d): %s" % (status, " ".join(args[1:])))


def check_imports(out_dir: str) -> None:
    """Imports every generated module from ``out_dir`` (which goes first on sys.path)."""
    if out_dir not in sys.path:
        sys.path.insert(0, out_dir)
    for name in MODULES:
        importlib.import_module(name)
    from moderation.v1 import moderation_pb2_grpc
    if not hasattr(moderation_pb2_grpc, "ModerationStub"):
        raise RuntimeError("moderation_pb2_grpc has no ModerationStub")


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: gen_stubs.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = os.path.abspath(argv[1])
    try:
        generate(out_dir)
        check_imports(out_dir)
    except Exception as error:  # reported, not a traceback
        print("gen_stubs: %s" % error, file=sys.stderr)
        return 1
    count = len(glob.glob(os.path.join(out_dir, "moderation", "v1", "*.py")))
    print("gen_stubs: %d modules of moderation.v1 in %s" % (count, out_dir), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
