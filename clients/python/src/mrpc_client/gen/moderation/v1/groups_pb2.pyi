from mrpc_client.gen.moderation.v1 import members_pb2 as _members_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
GROUP_TYPE_PASSWORD: GroupType
GROUP_TYPE_PRIVATE: GroupType
GROUP_TYPE_PUBLIC: GroupType
GROUP_TYPE_UNSPECIFIED: GroupType

class Group(_message.Message):
    __slots__ = ["created_at", "description", "frozen", "frozen_reason", "guid", "has_joined", "icon", "is_banned", "join_requests", "joined_at", "members_count", "metadata", "name", "owner", "scope", "tags", "type", "updated_at", "version"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FROZEN_FIELD_NUMBER: _ClassVar[int]
    FROZEN_REASON_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    HAS_JOINED_FIELD_NUMBER: _ClassVar[int]
    ICON_FIELD_NUMBER: _ClassVar[int]
    IS_BANNED_FIELD_NUMBER: _ClassVar[int]
    JOINED_AT_FIELD_NUMBER: _ClassVar[int]
    JOIN_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_COUNT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    created_at: int
    description: str
    frozen: bool
    frozen_reason: str
    guid: str
    has_joined: bool
    icon: str
    is_banned: bool
    join_requests: bool
    joined_at: int
    members_count: int
    metadata: _containers.ScalarMap[str, str]
    name: str
    owner: str
    scope: _members_pb2.Scope
    tags: _containers.RepeatedScalarFieldContainer[str]
    type: GroupType
    updated_at: int
    version: int
    def __init__(self, guid: _Optional[str] = ..., name: _Optional[str] = ..., icon: _Optional[str] = ..., description: _Optional[str] = ..., type: _Optional[_Union[GroupType, str]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., members_count: _Optional[int] = ..., version: _Optional[int] = ..., created_at: _Optional[int] = ..., updated_at: _Optional[int] = ..., has_joined: bool = ..., scope: _Optional[_Union[_members_pb2.Scope, str]] = ..., joined_at: _Optional[int] = ..., is_banned: bool = ..., frozen: bool = ..., frozen_reason: _Optional[str] = ..., join_requests: bool = ...) -> None: ...

class GroupType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
