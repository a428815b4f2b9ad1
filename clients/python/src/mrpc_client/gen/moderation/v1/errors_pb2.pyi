from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor
ERR_ALREADY_BANNED: ErrorCode
ERR_ALREADY_FROZEN: ErrorCode
ERR_ALREADY_JOINED: ErrorCode
ERR_ALREADY_MUTED: ErrorCode
ERR_BANNED_GROUPMEMBER: ErrorCode
ERR_CANNOT_BAN_OWNER: ErrorCode
ERR_CANNOT_CHANGE_OWNER_SCOPE: ErrorCode
ERR_CANNOT_KICK_OWNER: ErrorCode
ERR_CANNOT_MUTE_OWNER: ErrorCode
ERR_CURSOR_EXPIRED: ErrorCode
ERR_EMPTY_GROUP_PASS: ErrorCode
ERR_GROUP_FROZEN: ErrorCode
ERR_GROUP_JOIN_NOT_ALLOWED: ErrorCode
ERR_GROUP_NOT_FOUND: ErrorCode
ERR_GROUP_NOT_FROZEN: ErrorCode
ERR_GROUP_NOT_JOINED: ErrorCode
ERR_GROUP_NO_SELF_ACTION: ErrorCode
ERR_GUID_ALREADY_EXISTS: ErrorCode
ERR_INTERNAL: ErrorCode
ERR_INVALID_ARGUMENT: ErrorCode
ERR_INVITE_NOT_FOUND: ErrorCode
ERR_MEMBER_MUTED: ErrorCode
ERR_NOT_A_MEMBER: ErrorCode
ERR_OWNER_CANNOT_LEAVE: ErrorCode
ERR_PERMISSION_DENIED: ErrorCode
ERR_RATE_LIMITED: ErrorCode
ERR_SAME_SCOPE: ErrorCode
ERR_STORE_UNAVAILABLE: ErrorCode
ERR_TOO_MANY_SUBSCRIPTIONS: ErrorCode
ERR_UID_ALREADY_EXISTS: ErrorCode
ERR_UID_NOT_FOUND: ErrorCode
ERR_UNAUTHENTICATED: ErrorCode
ERR_UNSPECIFIED: ErrorCode
ERR_USER_NOT_BANNED: ErrorCode
ERR_USER_NOT_MUTED: ErrorCode
ERR_USER_OWNS_GROUPS: ErrorCode
ERR_VERSION_CONFLICT: ErrorCode
ERR_WRONG_GROUP_PASS: ErrorCode

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
