from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
SCOPE_ADMIN: Scope
SCOPE_MODERATOR: Scope
SCOPE_PARTICIPANT: Scope
SCOPE_UNSPECIFIED: Scope

class AppBan(_message.Message):
    __slots__ = ["avatar", "banned_at", "banned_by", "expires_at", "name", "reason", "shadow", "uid"]
    AVATAR_FIELD_NUMBER: _ClassVar[int]
    BANNED_AT_FIELD_NUMBER: _ClassVar[int]
    BANNED_BY_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SHADOW_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    avatar: str
    banned_at: int
    banned_by: str
    expires_at: int
    name: str
    reason: str
    shadow: bool
    uid: str
    def __init__(self, uid: _Optional[str] = ..., name: _Optional[str] = ..., avatar: _Optional[str] = ..., banned_at: _Optional[int] = ..., banned_by: _Optional[str] = ..., reason: _Optional[str] = ..., expires_at: _Optional[int] = ..., shadow: bool = ...) -> None: ...

class BannedMember(_message.Message):
    __slots__ = ["avatar", "banned_at", "banned_by", "expires_at", "joined_at", "name", "reason", "scope", "uid"]
    AVATAR_FIELD_NUMBER: _ClassVar[int]
    BANNED_AT_FIELD_NUMBER: _ClassVar[int]
    BANNED_BY_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    JOINED_AT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    avatar: str
    banned_at: int
    banned_by: str
    expires_at: int
    joined_at: int
    name: str
    reason: str
    scope: Scope
    uid: str
    def __init__(self, uid: _Optional[str] = ..., name: _Optional[str] = ..., avatar: _Optional[str] = ..., scope: _Optional[_Union[Scope, str]] = ..., joined_at: _Optional[int] = ..., banned_at: _Optional[int] = ..., banned_by: _Optional[str] = ..., reason: _Optional[str] = ..., expires_at: _Optional[int] = ...) -> None: ...

class GroupMember(_message.Message):
    __slots__ = ["avatar", "joined_at", "mute_reason", "muted_until", "name", "scope", "uid"]
    AVATAR_FIELD_NUMBER: _ClassVar[int]
    JOINED_AT_FIELD_NUMBER: _ClassVar[int]
    MUTED_UNTIL_FIELD_NUMBER: _ClassVar[int]
    MUTE_REASON_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    avatar: str
    joined_at: int
    mute_reason: str
    muted_until: int
    name: str
    scope: Scope
    uid: str
    def __init__(self, uid: _Optional[str] = ..., name: _Optional[str] = ..., avatar: _Optional[str] = ..., scope: _Optional[_Union[Scope, str]] = ..., joined_at: _Optional[int] = ..., muted_until: _Optional[int] = ..., mute_reason: _Optional[str] = ...) -> None: ...

class JoinRequest(_message.Message):
    __slots__ = ["avatar", "message", "name", "requested_at", "uid"]
    AVATAR_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    avatar: str
    message: str
    name: str
    requested_at: int
    uid: str
    def __init__(self, uid: _Optional[str] = ..., name: _Optional[str] = ..., avatar: _Optional[str] = ..., message: _Optional[str] = ..., requested_at: _Optional[int] = ...) -> None: ...

class MemberToAdd(_message.Message):
    __slots__ = ["scope", "uid"]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    scope: Scope
    uid: str
    def __init__(self, uid: _Optional[str] = ..., scope: _Optional[_Union[Scope, str]] = ...) -> None: ...

class UserResult(_message.Message):
    __slots__ = ["changed", "error_code", "message", "ok", "seq"]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    changed: bool
    error_code: str
    message: str
    ok: bool
    seq: int
    def __init__(self, ok: bool = ..., changed: bool = ..., error_code: _Optional[str] = ..., message: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class Scope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
