"""gRPC's rich error model for this client's errors: ``from_call``, as ``grpc_status.rpc_status``
has it.

On the gRPC wire the server ends a failed call with ``grpc-status-details-bin``: a
``google.rpc.Status`` (the code and the message) holding one ``google.rpc.ErrorInfo`` whose
``reason`` is the ``ERR_…`` code, whose ``domain`` is the package of the method called
(``moderation.v1``) and whose ``metadata`` are the error's details (docs/GRPC.md). This protocol
carries the same facts in its own ``mrpc.v1.Status``, so an ``RpcError`` that the server sent
rebuilds that ``google.rpc.Status`` from them and shows it where grpcio's errors do, in
``trailing_metadata()`` under ``grpc-status-details-bin``. Code written for grpcio reads it the
same way, with one import changed::

    from mrpc_client import rpc_status              # was: from grpc_status import rpc_status
    from google.rpc import error_details_pb2        # or rpc_status.ErrorInfo, see below

    try:
        stub.KickMember(request, timeout=2)
    except mrpc_client.RpcError as error:
        status = rpc_status.from_call(error)        # google.rpc.Status
        info = error_details_pb2.ErrorInfo()
        status.details[0].Unpack(info)
        print(info.reason, info.domain, dict(info.metadata))

The message classes are googleapis-common-protos' (``google.rpc.status_pb2.Status``, the class
``grpc_status`` returns) when that package is installed. This client depends on protobuf alone,
so without it the client builds the same two messages, ``google.rpc.Status`` and
``google.rpc.ErrorInfo``, in a descriptor pool of its own: the same names and the same wire
format, so ``Any.Unpack`` fills either package's ``ErrorInfo``. ``rpc_status.Status`` and
``rpc_status.ErrorInfo`` are the classes in use.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any, Mapping, Optional, Tuple

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

#: The trailing metadata key of the encoded ``google.rpc.Status``, as gRPC names it.
GRPC_DETAILS_METADATA_KEY = "grpc-status-details-bin"

_lock = threading.Lock()
_classes: Optional[Tuple[Any, Any]] = None


def from_call(call: Any) -> Optional[Any]:
    """The ``google.rpc.Status`` of a finished call — an ``RpcError``, or the call that
    ``with_call`` returns — read from its ``trailing_metadata()``; None when there is none, as
    with grpcio for an error the client decided itself (a deadline, a lost connection) and for
    a call that succeeded. Raises ``ValueError`` when the status disagrees with the call's
    ``code()`` or ``details()``, as ``grpc_status.rpc_status.from_call`` does."""
    metadata = call.trailing_metadata()
    if metadata is None:
        return None
    for key, value in metadata:
        if key == GRPC_DETAILS_METADATA_KEY:
            status = status_classes()[0].FromString(value)
            if status.code != int(call.code()):
                raise ValueError("Code in Status proto (%s) doesn't match status code (%s)" % (status.code, call.code()))
            if status.message != call.details():
                raise ValueError("Message in Status proto (%s) doesn't match status details (%s)"
                                 % (status.message, call.details()))
            return status
    return None


def domain_of(path: Optional[str]) -> str:
    """The ``ErrorInfo.domain`` of an error of the method at ``path``: the package of its service
    (``/moderation.v1.Moderation/KickMember`` → ``moderation.v1``), ``mrpc`` for a path that
    names no package, or for none (an error of no call, such as a refused handshake before any) —
    as the server's gRPC listener chooses it."""
    if not path:
        return "mrpc"
    service = path[1:] if path.startswith("/") else path
    service = service.split("/", 1)[0]
    dot = service.rfind(".")
    return service[:dot] if dot > 0 else "mrpc"


def encode_status(code: int, message: str, error_code: str, details: Mapping[str, str], domain: str) -> bytes:
    """The encoded ``google.rpc.Status`` the server's gRPC listener sends for this error: the code
    and the message, and an ``ErrorInfo`` (reason = ``error_code``, ``domain``, metadata =
    ``details``) when there is an ``ERR_…`` code or a detail."""
    status_class, info_class = status_classes()
    status = status_class(code=code, message=message)
    if error_code or details:
        status.details.add().Pack(info_class(reason=error_code, domain=domain, metadata=dict(details)))
    encoded: bytes = status.SerializeToString(deterministic=True)
    return encoded


def status_classes() -> Tuple[Any, Any]:
    """(``google.rpc.Status``, ``google.rpc.ErrorInfo``): googleapis-common-protos' classes when
    it is installed, else the client's own (see the module's documentation)."""
    global _classes
    with _lock:
        if _classes is None:
            try:
                status_pb2 = importlib.import_module("google.rpc.status_pb2")
                error_details_pb2 = importlib.import_module("google.rpc.error_details_pb2")
                _classes = (status_pb2.Status, error_details_pb2.ErrorInfo)
            except Exception:  # not installed, or made for another protobuf than this one
                _classes = _build_classes()
        return _classes


def __getattr__(name: str) -> Any:
    """``rpc_status.Status`` and ``rpc_status.ErrorInfo``: the classes in use, made on first use."""
    if name == "Status":
        return status_classes()[0]
    if name == "ErrorInfo":
        return status_classes()[1]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def _build_classes() -> Tuple[Any, Any]:
    """``google.rpc.Status`` and ``google.rpc.ErrorInfo`` as google/rpc/status.proto and
    error_details.proto declare them, in a pool of their own: googleapis-common-protos, should
    it be imported later, registers the real files in the default pool, where these would
    clash with them."""
    field = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)

    status_file = descriptor_pb2.FileDescriptorProto(name="google/rpc/status.proto", package="google.rpc",
                                                     syntax="proto3", dependency=["google/protobuf/any.proto"])
    status = status_file.message_type.add(name="Status")
    status.field.add(name="code", json_name="code", number=1, type=field.TYPE_INT32, label=field.LABEL_OPTIONAL)
    status.field.add(name="message", json_name="message", number=2, type=field.TYPE_STRING,
                     label=field.LABEL_OPTIONAL)
    status.field.add(name="details", json_name="details", number=3, type=field.TYPE_MESSAGE,
                     type_name=".google.protobuf.Any", label=field.LABEL_REPEATED)
    pool.AddSerializedFile(status_file.SerializeToString())

    details_file = descriptor_pb2.FileDescriptorProto(name="google/rpc/error_details.proto", package="google.rpc",
                                                      syntax="proto3")
    info = details_file.message_type.add(name="ErrorInfo")
    info.field.add(name="reason", json_name="reason", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    info.field.add(name="domain", json_name="domain", number=2, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    info.field.add(name="metadata", json_name="metadata", number=3, type=field.TYPE_MESSAGE,
                   type_name=".google.rpc.ErrorInfo.MetadataEntry", label=field.LABEL_REPEATED)
    entry = info.nested_type.add(name="MetadataEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", json_name="key", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    entry.field.add(name="value", json_name="value", number=2, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    pool.AddSerializedFile(details_file.SerializeToString())

    return (_message_class(pool, "google.rpc.Status"), _message_class(pool, "google.rpc.ErrorInfo"))


def _message_class(pool: descriptor_pool.DescriptorPool, name: str) -> Any:
    descriptor = pool.FindMessageTypeByName(name)
    # protobuf 4.22 added message_factory.GetMessageClass and 6.x removed
    # MessageFactory.GetPrototype: neither spans every protobuf this client supports (4.21 up).
    get_message_class = getattr(message_factory, "GetMessageClass", None)
    if get_message_class is not None:
        return get_message_class(descriptor)
    return getattr(message_factory.MessageFactory(pool), "GetPrototype")(descriptor)
