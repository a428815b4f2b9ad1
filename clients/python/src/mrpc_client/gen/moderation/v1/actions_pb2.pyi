from mrpc_client.gen.moderation.v1 import groups_pb2 as _groups_pb2
from mrpc_client.gen.moderation.v1 import members_pb2 as _members_pb2
from mrpc_client.gen.moderation.v1 import users_pb2 as _users_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

ACTION_TYPE_ADDED: ActionType
ACTION_TYPE_APP_BANNED: ActionType
ACTION_TYPE_APP_UNBANNED: ActionType
ACTION_TYPE_BANNED: ActionType
ACTION_TYPE_CONTENT_RULES_CHANGED: ActionType
ACTION_TYPE_CREATED: ActionType
ACTION_TYPE_DELETED: ActionType
ACTION_TYPE_FROZEN: ActionType
ACTION_TYPE_INVITED: ActionType
ACTION_TYPE_INVITE_ACCEPTED: ActionType
ACTION_TYPE_INVITE_DECLINED: ActionType
ACTION_TYPE_INVITE_REVOKED: ActionType
ACTION_TYPE_JOINED: ActionType
ACTION_TYPE_JOIN_REQUESTED: ActionType
ACTION_TYPE_JOIN_REQUEST_APPROVED: ActionType
ACTION_TYPE_JOIN_REQUEST_CANCELLED: ActionType
ACTION_TYPE_JOIN_REQUEST_REJECTED: ActionType
ACTION_TYPE_KICKED: ActionType
ACTION_TYPE_LEFT: ActionType
ACTION_TYPE_MUTED: ActionType
ACTION_TYPE_OWNERSHIP_TRANSFERRED: ActionType
ACTION_TYPE_REPORTED: ActionType
ACTION_TYPE_REPORT_RESOLVED: ActionType
ACTION_TYPE_SCOPE_CHANGED: ActionType
ACTION_TYPE_UNBANNED: ActionType
ACTION_TYPE_UNFROZEN: ActionType
ACTION_TYPE_UNMUTED: ActionType
ACTION_TYPE_UNSPECIFIED: ActionType
ACTION_TYPE_UPDATED: ActionType
ACTION_TYPE_USER_DELETED: ActionType
DESCRIPTOR: _descriptor.FileDescriptor

class Action(_message.Message):
    __slots__ = ["action", "action_by", "action_for", "action_on", "expires_at", "idempotency_key", "new_scope", "old_scope", "reason", "report_id", "request_id", "rules_added", "rules_removed", "seq", "shadow", "timestamp"]
    ACTION_BY_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ACTION_FOR_FIELD_NUMBER: _ClassVar[int]
    ACTION_ON_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NEW_SCOPE_FIELD_NUMBER: _ClassVar[int]
    OLD_SCOPE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REPORT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    RULES_ADDED_FIELD_NUMBER: _ClassVar[int]
    RULES_REMOVED_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SHADOW_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    action: ActionType
    action_by: _users_pb2.User
    action_for: _groups_pb2.Group
    action_on: _users_pb2.User
    expires_at: int
    idempotency_key: str
    new_scope: _members_pb2.Scope
    old_scope: _members_pb2.Scope
    reason: str
    report_id: int
    request_id: str
    rules_added: int
    rules_removed: int
    seq: int
    shadow: bool
    timestamp: int
    def __init__(self, seq: _Optional[int] = ..., action: _Optional[_Union[ActionType, str]] = ..., action_by: _Optional[_Union[_users_pb2.User, _Mapping]] = ..., action_on: _Optional[_Union[_users_pb2.User, _Mapping]] = ..., action_for: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ..., old_scope: _Optional[_Union[_members_pb2.Scope, str]] = ..., new_scope: _Optional[_Union[_members_pb2.Scope, str]] = ..., reason: _Optional[str] = ..., expires_at: _Optional[int] = ..., timestamp: _Optional[int] = ..., idempotency_key: _Optional[str] = ..., request_id: _Optional[str] = ..., report_id: _Optional[int] = ..., shadow: bool = ..., rules_added: _Optional[int] = ..., rules_removed: _Optional[int] = ...) -> None: ...

class ActionType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
