from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetFileDescriptorSetRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetFileDescriptorSetResponse(_message.Message):
    __slots__ = ["file_descriptor_set"]
    FILE_DESCRIPTOR_SET_FIELD_NUMBER: _ClassVar[int]
    file_descriptor_set: bytes
    def __init__(self, file_descriptor_set: _Optional[bytes] = ...) -> None: ...

class ListServicesRequest(_message.Message):
    __slots__ = ["service"]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    service: str
    def __init__(self, service: _Optional[str] = ...) -> None: ...

class ListServicesResponse(_message.Message):
    __slots__ = ["services"]
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    services: _containers.RepeatedCompositeFieldContainer[ServiceInfo]
    def __init__(self, services: _Optional[_Iterable[_Union[ServiceInfo, _Mapping]]] = ...) -> None: ...

class MethodInfo(_message.Message):
    __slots__ = ["client_streaming", "name", "path", "request_type", "response_type", "server_streaming"]
    CLIENT_STREAMING_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SERVER_STREAMING_FIELD_NUMBER: _ClassVar[int]
    client_streaming: bool
    name: str
    path: str
    request_type: str
    response_type: str
    server_streaming: bool
    def __init__(self, name: _Optional[str] = ..., path: _Optional[str] = ..., request_type: _Optional[str] = ..., response_type: _Optional[str] = ..., client_streaming: bool = ..., server_streaming: bool = ...) -> None: ...

class ServiceInfo(_message.Message):
    __slots__ = ["methods", "name"]
    METHODS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    methods: _containers.RepeatedCompositeFieldContainer[MethodInfo]
    name: str
    def __init__(self, name: _Optional[str] = ..., methods: _Optional[_Iterable[_Union[MethodInfo, _Mapping]]] = ...) -> None: ...
