from mrpc_client.gen.moderation.v1 import groups_pb2 as _groups_pb2
from mrpc_client.gen.moderation.v1 import members_pb2 as _members_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Invite(_message.Message):
    __slots__ = ["avatar", "expires_at", "group", "guid", "invited_at", "invited_by", "name", "scope", "uid"]
    AVATAR_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    INVITED_AT_FIELD_NUMBER: _ClassVar[int]
    INVITED_BY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    avatar: str
    expires_at: int
    group: _groups_pb2.Group
    guid: str
    invited_at: int
    invited_by: str
    name: str
    scope: _members_pb2.Scope
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., name: _Optional[str] = ..., avatar: _Optional[str] = ..., scope: _Optional[_Union[_members_pb2.Scope, str]] = ..., invited_by: _Optional[str] = ..., invited_at: _Optional[int] = ..., expires_at: _Optional[int] = ..., group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...
