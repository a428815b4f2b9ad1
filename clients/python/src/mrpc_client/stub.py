"""The base of the generated per-service stubs."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .methods import MethodSpec, Req, Resp, ServiceSpec

if TYPE_CHECKING:
    from concurrent.futures import Future

    from typing_extensions import Protocol, Unpack

    from .options import CallOptions, StreamOptions
    from .stream import ServerStream

    class Invoker(Protocol):
        """What a stub calls through (``Client`` is one)."""

        def call(self, method: MethodSpec[Req, Resp], request: Req, **options: Unpack[CallOptions]) -> Resp: ...

        def call_async(self, method: MethodSpec[Req, Resp], request: Req,
                       **options: Unpack[CallOptions]) -> "Future[Resp]": ...

        def stream(self, method: MethodSpec[Req, Resp], request: Req,
                   **options: Unpack[StreamOptions]) -> ServerStream[Resp]: ...


class ServiceStub:
    """Typed methods of one service, generated from its descriptor, over an invoker.

    Each generated method only names its ``MethodSpec`` and forwards to the invoker, so the
    behaviour of every call (framing, deadlines, errors, compression) lives in one place.
    """

    SPEC: ClassVar[ServiceSpec]

    def __init__(self, invoker: "Invoker") -> None:
        self._invoker = invoker

    def __repr__(self) -> str:
        return "<%s for %s>" % (type(self).__name__, self.SPEC.name)

    @classmethod
    def spec(cls) -> ServiceSpec:
        """The service this stub calls."""
        return cls.SPEC
