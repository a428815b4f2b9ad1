from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ERR_BAD_ENCODING: ErrorCode
ERR_CANCELLED: ErrorCode
ERR_DEADLINE_EXCEEDED: ErrorCode
ERR_INTERNAL: ErrorCode
ERR_INVALID_ARGUMENT: ErrorCode
ERR_MESSAGE_TOO_LARGE: ErrorCode
ERR_NOT_FOUND: ErrorCode
ERR_OVERLOADED: ErrorCode
ERR_PROTOCOL: ErrorCode
ERR_RATE_LIMITED: ErrorCode
ERR_SLOW_CONSUMER: ErrorCode
ERR_TOO_MANY_CALLS: ErrorCode
ERR_TOO_MANY_CONNECTIONS: ErrorCode
ERR_UNAUTHENTICATED: ErrorCode
ERR_UNAVAILABLE: ErrorCode
ERR_UNIMPLEMENTED: ErrorCode
ERR_UNSPECIFIED: ErrorCode

class CallHeader(_message.Message):
    __slots__ = ["accept_encodings", "idempotency_key", "metadata", "method", "on_behalf_of", "request_id", "timeout_ms"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ACCEPT_ENCODINGS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    ON_BEHALF_OF_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    accept_encodings: _containers.RepeatedScalarFieldContainer[str]
    idempotency_key: str
    metadata: _containers.ScalarMap[str, str]
    method: str
    on_behalf_of: str
    request_id: str
    timeout_ms: int
    def __init__(self, method: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., on_behalf_of: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., request_id: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., accept_encodings: _Optional[_Iterable[str]] = ...) -> None: ...

class Goaway(_message.Message):
    __slots__ = ["last_stream_id", "status"]
    LAST_STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    last_stream_id: int
    status: Status
    def __init__(self, last_stream_id: _Optional[int] = ..., status: _Optional[_Union[Status, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ["accept_encodings", "api_key", "app_id", "client_name"]
    ACCEPT_ENCODINGS_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    APP_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_NAME_FIELD_NUMBER: _ClassVar[int]
    accept_encodings: _containers.RepeatedScalarFieldContainer[str]
    api_key: str
    app_id: str
    client_name: str
    def __init__(self, api_key: _Optional[str] = ..., client_name: _Optional[str] = ..., accept_encodings: _Optional[_Iterable[str]] = ..., app_id: _Optional[str] = ...) -> None: ...

class HelloAck(_message.Message):
    __slots__ = ["accept_encodings", "app_id", "idle_timeout_ms", "max_call_header_bytes", "max_concurrent_calls", "max_message_bytes", "protocol_version", "schema_digest", "server_name", "server_version"]
    ACCEPT_ENCODINGS_FIELD_NUMBER: _ClassVar[int]
    APP_ID_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_CALL_HEADER_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_CALLS_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    accept_encodings: _containers.RepeatedScalarFieldContainer[str]
    app_id: str
    idle_timeout_ms: int
    max_call_header_bytes: int
    max_concurrent_calls: int
    max_message_bytes: int
    protocol_version: int
    schema_digest: str
    server_name: str
    server_version: str
    def __init__(self, server_name: _Optional[str] = ..., server_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., max_call_header_bytes: _Optional[int] = ..., max_concurrent_calls: _Optional[int] = ..., accept_encodings: _Optional[_Iterable[str]] = ..., app_id: _Optional[str] = ..., idle_timeout_ms: _Optional[int] = ..., schema_digest: _Optional[str] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ["code", "details", "error_code", "message"]
    class DetailsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: int
    details: _containers.ScalarMap[str, str]
    error_code: str
    message: str
    def __init__(self, code: _Optional[int] = ..., error_code: _Optional[str] = ..., message: _Optional[str] = ..., details: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
