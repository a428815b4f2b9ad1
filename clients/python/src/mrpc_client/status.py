"""gRPC's canonical status codes, as MRPC's ``Status.code`` carries them."""

from __future__ import annotations

import enum


class StatusCode(enum.IntEnum):
    """The 17 canonical codes (0 OK … 16 UNAUTHENTICATED), with gRPC's names, numbers and meanings.

    ``RpcError.code()`` returns one, as grpcio's does a ``grpc.StatusCode``: compare by member
    (``error.code() == StatusCode.NOT_FOUND``), read ``.name``; it prints as grpcio's does
    (``StatusCode.NOT_FOUND``), and, being an ``IntEnum``, it also equals its number.
    """

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16

    def __str__(self) -> str:
        return "StatusCode.%s" % self.name

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def code_name(code: int) -> str:
    """The canonical name of ``code``, or ``"CODE_<n>"`` for a number outside 0–16."""
    try:
        return StatusCode(code).name
    except ValueError:
        return "CODE_%d" % code
