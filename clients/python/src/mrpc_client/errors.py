"""The one exception type a call raises."""

from __future__ import annotations

from typing import Dict, Mapping, Optional

from .gen.mrpc.v1 import envelope_pb2
from .status import StatusCode, code_name


class RpcError(Exception):
    """A call that did not succeed: the server's ``Status``, or the client's own verdict.

    Every failure a caller can meet while calling — an error status from the server, a deadline,
    a lost connection, a refused handshake, a server that broke the protocol — is an ``RpcError``
    so that one ``except`` clause handles them all, and so that code and error code are always
    there to branch on:

    - ``code`` (int) and ``code_name`` (``"PERMISSION_DENIED"``): gRPC's canonical status;
    - ``error_code``: the machine-readable ``ERR_…`` name (empty when the peer sent none);
    - ``message``: what was wrong, in words; ``details``: the status's key/value details
      (e.g. ``last_seq``, ``retry_after_ms``);
    - ``local``: True when this client decided the outcome (its own deadline, a lost connection,
      a bad reply) rather than a ``Status`` sent by the server;
    - ``not_run``: True when the call is known not to have run (refused before running, or above
      a GOAWAY's ``last_stream_id``), so retrying it cannot apply it twice.
    """

    def __init__(
        self,
        code: int,
        error_code: str = "",
        message: str = "",
        details: Optional[Mapping[str, str]] = None,
        *,
        local: bool = False,
        not_run: bool = False,
    ) -> None:
        self.code: int = int(code)
        self.error_code: str = error_code
        self.message: str = message
        self.details: Dict[str, str] = dict(details or {})
        self.local: bool = local
        self.not_run: bool = not_run
        super().__init__(self._describe())

    @property
    def code_name(self) -> str:
        """The canonical name of ``code``, e.g. ``"PERMISSION_DENIED"``."""
        return code_name(self.code)

    @property
    def status_code(self) -> Optional[StatusCode]:
        """``code`` as a ``StatusCode``, or None for a number outside 0–16."""
        try:
            return StatusCode(self.code)
        except ValueError:
            return None

    @classmethod
    def from_status(cls, status: envelope_pb2.Status, *, not_run: bool = False) -> "RpcError":
        """The error a non-OK ``mrpc.v1.Status`` from the server stands for."""
        return cls(status.code, status.error_code, status.message, dict(status.details), not_run=not_run)

    @classmethod
    def client_side(cls, code: StatusCode, error_code: str, message: str, *, not_run: bool = False,
                    details: Optional[Mapping[str, str]] = None) -> "RpcError":
        """An error decided by this client (``local`` is True)."""
        return cls(code, error_code, message, details, local=True, not_run=not_run)

    def _describe(self) -> str:
        text = self.code_name
        if self.error_code:
            text += " " + self.error_code
        if self.message:
            text += ": " + self.message
        if self.details:
            text += " [" + ", ".join("%s=%s" % (k, self.details[k]) for k in sorted(self.details)) + "]"
        return text

    def __repr__(self) -> str:
        return "RpcError(%s)" % self._describe()

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_rebuild, (self.code, self.error_code, self.message, self.details, self.local, self.not_run))


def _rebuild(code: int, error_code: str, message: str, details: Dict[str, str], local: bool,
             not_run: bool) -> RpcError:
    return RpcError(code, error_code, message, details, local=local, not_run=not_run)
