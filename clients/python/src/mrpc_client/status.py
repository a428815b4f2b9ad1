"""gRPC's canonical status codes, as MRPC's ``Status.code`` carries them."""

from __future__ import annotations

import enum


class StatusCode(enum.IntEnum):
    """The 17 canonical codes (0 OK … 16 UNAUTHENTICATED), with gRPC's names and meanings.

    It exists so that errors can be compared by name (``err.code == StatusCode.NOT_FOUND``)
    while ``RpcError.code`` stays a plain int that also holds codes this client does not know.
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


def code_name(code: int) -> str:
    """The canonical name of ``code``, or ``"CODE_<n>"`` for a number outside 0–16."""
    try:
        return StatusCode(code).name
    except ValueError:
        return "CODE_%d" % code
