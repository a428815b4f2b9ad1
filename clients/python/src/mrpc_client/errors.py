"""The one exception type a call raises, shaped like grpcio's ``grpc.RpcError``."""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple, Union

from . import rpc_status
from .gen.mrpc.v1 import envelope_pb2
from .status import StatusCode

#: Call metadata as grpcio returns it: ``(key, value)`` pairs, ``bytes`` values for ``-bin`` keys.
MetadataTuple = Tuple[Tuple[str, Union[str, bytes]], ...]


class RpcError(Exception):
    """A call that did not succeed: the server's ``Status``, or the client's own verdict.

    Every failure a caller can meet while calling — an error status from the server, an unknown
    method, a deadline, a lost connection, a refused handshake, a request over the server's size
    limit, a server that broke the protocol — is an ``RpcError``, so that one ``except`` clause
    handles them all, the way ``except grpc.RpcError`` does with grpcio:

    - ``code()``: a ``StatusCode`` (gRPC's canonical codes and numbering; ``.name`` is
      ``"PERMISSION_DENIED"``), ``details()``: what was wrong, in words;
    - ``error_code``: the machine-readable ``ERR_…`` name (empty when the peer sent none),
      ``error_details``: the status's key/value details (``last_seq``, ``retry_after_ms``, …);
    - ``last_seq``: on the error that ends a ``Subscribe`` stream, the seq of the last event the
      stream delivered — subscribe again with ``after_seq=last_seq`` to go on without a gap
      (None when it delivered none and its request named no start); None on other errors;
    - ``local``: True when this client decided the outcome (its own deadline, a lost connection,
      a bad reply) rather than a ``Status`` sent by the server;
    - ``not_run``: True when the call is known not to have run (refused before running, or above
      a GOAWAY's ``last_stream_id``), so retrying it cannot apply it twice;
    - ``method``: the path of the method called, when known;
    - as grpcio's errors, which are also calls: ``trailing_metadata()`` holds
      ``grpc-status-details-bin``, the ``google.rpc.Status`` the server's gRPC listener sends for
      the same error (an ``ErrorInfo`` with the ``ERR_…`` code as its reason, the method's package
      as its domain, the details as its metadata), which ``mrpc_client.rpc_status.from_call``
      reads; an error this client decided itself has none, as with grpcio.
      ``initial_metadata()`` is empty: this protocol has no response headers.
    """

    def __init__(
        self,
        code: Union[StatusCode, int],
        error_code: str = "",
        message: str = "",
        details: Optional[Mapping[str, str]] = None,
        *,
        local: bool = False,
        not_run: bool = False,
        last_seq: Optional[int] = None,
        method: Optional[str] = None,
    ) -> None:
        try:
            status = StatusCode(int(code))
        except ValueError:  # a peer outside gRPC's 0–16: keep the number in the text
            status, message = StatusCode.UNKNOWN, "status code %d: %s" % (int(code), message)
        self._code = status
        self._message = message
        self.error_code: str = error_code
        self.error_details: Dict[str, str] = dict(details or {})
        self.local: bool = local
        self.not_run: bool = not_run
        self.last_seq: Optional[int] = last_seq
        self.method: Optional[str] = method
        self._status_bytes: Optional[bytes] = None
        super().__init__(self._describe())

    def code(self) -> StatusCode:
        """The canonical status code."""
        return self._code

    def details(self) -> str:
        """What was wrong, in words (``Status.message``)."""
        return self._message

    def debug_error_string(self) -> str:
        """Everything the error says on one line: code, ``ERR_…`` code, message, details."""
        return self._describe()

    def initial_metadata(self) -> MetadataTuple:
        """Always empty: this protocol has no response headers."""
        return ()

    def trailing_metadata(self) -> MetadataTuple:
        """``(("grpc-status-details-bin", <google.rpc.Status>),)`` for an error the server sent,
        as grpcio's errors carry it (read it with ``mrpc_client.rpc_status.from_call``); empty
        for an error this client decided (``local``)."""
        if self.local:
            return ()
        if self._status_bytes is None:
            self._status_bytes = rpc_status.encode_status(int(self._code), self._message, self.error_code,
                                                          self.error_details, rpc_status.domain_of(self.method))
        return ((rpc_status.GRPC_DETAILS_METADATA_KEY, self._status_bytes),)

    @classmethod
    def from_status(cls, status: envelope_pb2.Status, *, not_run: bool = False,
                    method: Optional[str] = None) -> "RpcError":
        """The error a non-OK ``mrpc.v1.Status`` from the server stands for, in a call of
        ``method`` (a path) when known."""
        return cls(status.code, status.error_code, status.message, dict(status.details), not_run=not_run,
                   method=method)

    @classmethod
    def client_side(cls, code: StatusCode, error_code: str, message: str, *, not_run: bool = False,
                    details: Optional[Mapping[str, str]] = None) -> "RpcError":
        """An error decided by this client (``local`` is True)."""
        return cls(code, error_code, message, details, local=True, not_run=not_run)

    def _describe(self) -> str:
        text = self._code.name
        if self.error_code:
            text += " " + self.error_code
        if self._message:
            text += ": " + self._message
        if self.error_details:
            text += " [" + ", ".join("%s=%s" % (k, self.error_details[k]) for k in sorted(self.error_details)) + "]"
        return text

    def __str__(self) -> str:
        return self._describe()

    def __repr__(self) -> str:
        return "RpcError(%s)" % self._describe()

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_rebuild, (int(self._code), self.error_code, self._message, self.error_details, self.local,
                           self.not_run, self.last_seq, self.method))


def _rebuild(code: int, error_code: str, message: str, details: Dict[str, str], local: bool,
             not_run: bool, last_seq: Optional[int], method: Optional[str] = None) -> RpcError:
    return RpcError(code, error_code, message, details, local=local, not_run=not_run, last_seq=last_seq,
                    method=method)
