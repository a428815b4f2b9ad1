from mrpc_client.gen.moderation.v1 import actions_pb2 as _actions_pb2
from mrpc_client.gen.moderation.v1 import content_pb2 as _content_pb2
from mrpc_client.gen.moderation.v1 import groups_pb2 as _groups_pb2
from mrpc_client.gen.moderation.v1 import invites_pb2 as _invites_pb2
from mrpc_client.gen.moderation.v1 import members_pb2 as _members_pb2
from mrpc_client.gen.moderation.v1 import reports_pb2 as _reports_pb2
from mrpc_client.gen.moderation.v1 import users_pb2 as _users_pb2
from mrpc_client.gen.moderation.v1 import webhooks_pb2 as _webhooks_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AcceptInviteRequest(_message.Message):
    __slots__ = ["guid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    def __init__(self, guid: _Optional[str] = ...) -> None: ...

class AcceptInviteResponse(_message.Message):
    __slots__ = ["action", "group"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    group: _groups_pb2.Group
    def __init__(self, group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class AddContentRulesRequest(_message.Message):
    __slots__ = ["guid", "rules"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    guid: str
    rules: _containers.RepeatedCompositeFieldContainer[_content_pb2.NewContentRule]
    def __init__(self, guid: _Optional[str] = ..., rules: _Optional[_Iterable[_Union[_content_pb2.NewContentRule, _Mapping]]] = ...) -> None: ...

class AddContentRulesResponse(_message.Message):
    __slots__ = ["action", "results"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    results: _containers.RepeatedCompositeFieldContainer[_content_pb2.ContentRuleResult]
    def __init__(self, results: _Optional[_Iterable[_Union[_content_pb2.ContentRuleResult, _Mapping]]] = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class AddMembersRequest(_message.Message):
    __slots__ = ["guid", "members"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    guid: str
    members: _containers.RepeatedCompositeFieldContainer[_members_pb2.MemberToAdd]
    def __init__(self, guid: _Optional[str] = ..., members: _Optional[_Iterable[_Union[_members_pb2.MemberToAdd, _Mapping]]] = ...) -> None: ...

class AddMembersResponse(_message.Message):
    __slots__ = ["group", "results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    GROUP_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    group: _groups_pb2.Group
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ..., group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...

class ApproveJoinRequestRequest(_message.Message):
    __slots__ = ["guid", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class ApproveJoinRequestResponse(_message.Message):
    __slots__ = ["action", "group"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    group: _groups_pb2.Group
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...

class BanMemberRequest(_message.Message):
    __slots__ = ["duration_ms", "guid", "if_not_banned", "reason", "uid"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    IF_NOT_BANNED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    guid: str
    if_not_banned: bool
    reason: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., reason: _Optional[str] = ..., duration_ms: _Optional[int] = ..., if_not_banned: bool = ...) -> None: ...

class BanMemberResponse(_message.Message):
    __slots__ = ["action", "ban", "changed"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    BAN_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    ban: _members_pb2.BannedMember
    changed: bool
    def __init__(self, changed: bool = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., ban: _Optional[_Union[_members_pb2.BannedMember, _Mapping]] = ...) -> None: ...

class BanUserFromAppRequest(_message.Message):
    __slots__ = ["duration_ms", "reason", "shadow", "uid"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SHADOW_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    reason: str
    shadow: bool
    uid: str
    def __init__(self, uid: _Optional[str] = ..., reason: _Optional[str] = ..., duration_ms: _Optional[int] = ..., shadow: bool = ...) -> None: ...

class BanUserFromAppResponse(_message.Message):
    __slots__ = ["action", "ban"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    BAN_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    ban: _members_pb2.AppBan
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., ban: _Optional[_Union[_members_pb2.AppBan, _Mapping]] = ...) -> None: ...

class BulkBanMembersRequest(_message.Message):
    __slots__ = ["duration_ms", "guid", "if_not_banned", "reason", "uids"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    IF_NOT_BANNED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    UIDS_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    guid: str
    if_not_banned: bool
    reason: str
    uids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, guid: _Optional[str] = ..., uids: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ..., duration_ms: _Optional[int] = ..., if_not_banned: bool = ...) -> None: ...

class BulkBanMembersResponse(_message.Message):
    __slots__ = ["results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ...) -> None: ...

class BulkKickMembersRequest(_message.Message):
    __slots__ = ["guid", "uids"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    UIDS_FIELD_NUMBER: _ClassVar[int]
    guid: str
    uids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, guid: _Optional[str] = ..., uids: _Optional[_Iterable[str]] = ...) -> None: ...

class BulkKickMembersResponse(_message.Message):
    __slots__ = ["results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ...) -> None: ...

class BulkMuteMembersRequest(_message.Message):
    __slots__ = ["duration_ms", "guid", "if_not_muted", "reason", "uids"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    IF_NOT_MUTED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    UIDS_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    guid: str
    if_not_muted: bool
    reason: str
    uids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, guid: _Optional[str] = ..., uids: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ..., duration_ms: _Optional[int] = ..., if_not_muted: bool = ...) -> None: ...

class BulkMuteMembersResponse(_message.Message):
    __slots__ = ["results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ...) -> None: ...

class BulkUnbanMembersRequest(_message.Message):
    __slots__ = ["guid", "only_if_banned", "uids"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    ONLY_IF_BANNED_FIELD_NUMBER: _ClassVar[int]
    UIDS_FIELD_NUMBER: _ClassVar[int]
    guid: str
    only_if_banned: bool
    uids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, guid: _Optional[str] = ..., uids: _Optional[_Iterable[str]] = ..., only_if_banned: bool = ...) -> None: ...

class BulkUnbanMembersResponse(_message.Message):
    __slots__ = ["results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ...) -> None: ...

class BulkUnmuteMembersRequest(_message.Message):
    __slots__ = ["guid", "only_if_muted", "uids"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    ONLY_IF_MUTED_FIELD_NUMBER: _ClassVar[int]
    UIDS_FIELD_NUMBER: _ClassVar[int]
    guid: str
    only_if_muted: bool
    uids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, guid: _Optional[str] = ..., uids: _Optional[_Iterable[str]] = ..., only_if_muted: bool = ...) -> None: ...

class BulkUnmuteMembersResponse(_message.Message):
    __slots__ = ["results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ...) -> None: ...

class CancelJoinRequestRequest(_message.Message):
    __slots__ = ["guid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    def __init__(self, guid: _Optional[str] = ...) -> None: ...

class CancelJoinRequestResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class ChangeMemberScopeRequest(_message.Message):
    __slots__ = ["guid", "scope", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    scope: _members_pb2.Scope
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., scope: _Optional[_Union[_members_pb2.Scope, str]] = ...) -> None: ...

class ChangeMemberScopeResponse(_message.Message):
    __slots__ = ["action", "member"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    MEMBER_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    member: _members_pb2.GroupMember
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., member: _Optional[_Union[_members_pb2.GroupMember, _Mapping]] = ...) -> None: ...

class CheckPostRequest(_message.Message):
    __slots__ = ["checks"]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    checks: _containers.RepeatedCompositeFieldContainer[PostCheck]
    def __init__(self, checks: _Optional[_Iterable[_Union[PostCheck, _Mapping]]] = ...) -> None: ...

class CheckPostResponse(_message.Message):
    __slots__ = ["results"]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[PostCheckResult]
    def __init__(self, results: _Optional[_Iterable[_Union[PostCheckResult, _Mapping]]] = ...) -> None: ...

class CreateGroupRequest(_message.Message):
    __slots__ = ["banned_uids", "description", "guid", "icon", "members", "metadata", "name", "owner", "password", "tags", "type"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BANNED_UIDS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    ICON_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    banned_uids: _containers.RepeatedScalarFieldContainer[str]
    description: str
    guid: str
    icon: str
    members: _containers.RepeatedCompositeFieldContainer[_members_pb2.MemberToAdd]
    metadata: _containers.ScalarMap[str, str]
    name: str
    owner: str
    password: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    type: _groups_pb2.GroupType
    def __init__(self, guid: _Optional[str] = ..., name: _Optional[str] = ..., icon: _Optional[str] = ..., description: _Optional[str] = ..., type: _Optional[_Union[_groups_pb2.GroupType, str]] = ..., password: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., members: _Optional[_Iterable[_Union[_members_pb2.MemberToAdd, _Mapping]]] = ..., banned_uids: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateGroupResponse(_message.Message):
    __slots__ = ["group", "results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    GROUP_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    group: _groups_pb2.Group
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ..., results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ...) -> None: ...

class CreateUserRequest(_message.Message):
    __slots__ = ["avatar", "metadata", "name", "uid"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    AVATAR_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    avatar: str
    metadata: _containers.ScalarMap[str, str]
    name: str
    uid: str
    def __init__(self, uid: _Optional[str] = ..., name: _Optional[str] = ..., avatar: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CreateUserResponse(_message.Message):
    __slots__ = ["user"]
    USER_FIELD_NUMBER: _ClassVar[int]
    user: _users_pb2.User
    def __init__(self, user: _Optional[_Union[_users_pb2.User, _Mapping]] = ...) -> None: ...

class CreateWebhookRequest(_message.Message):
    __slots__ = ["description", "guids", "kinds", "secret", "url"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    GUIDS_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    description: str
    guids: _containers.RepeatedScalarFieldContainer[str]
    kinds: _containers.RepeatedScalarFieldContainer[_actions_pb2.ActionType]
    secret: str
    url: str
    def __init__(self, url: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[_actions_pb2.ActionType, str]]] = ..., guids: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., secret: _Optional[str] = ...) -> None: ...

class CreateWebhookResponse(_message.Message):
    __slots__ = ["secret", "webhook"]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    secret: str
    webhook: _webhooks_pb2.Webhook
    def __init__(self, webhook: _Optional[_Union[_webhooks_pb2.Webhook, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class DeclineInviteRequest(_message.Message):
    __slots__ = ["guid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    def __init__(self, guid: _Optional[str] = ...) -> None: ...

class DeclineInviteResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class DeleteContentRulesRequest(_message.Message):
    __slots__ = ["guid", "ids"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    guid: str
    ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, guid: _Optional[str] = ..., ids: _Optional[_Iterable[int]] = ...) -> None: ...

class DeleteContentRulesResponse(_message.Message):
    __slots__ = ["action", "results"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    results: _containers.RepeatedCompositeFieldContainer[_content_pb2.ContentRuleResult]
    def __init__(self, results: _Optional[_Iterable[_Union[_content_pb2.ContentRuleResult, _Mapping]]] = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class DeleteGroupRequest(_message.Message):
    __slots__ = ["guid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    def __init__(self, guid: _Optional[str] = ...) -> None: ...

class DeleteGroupResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class DeleteUserRequest(_message.Message):
    __slots__ = ["uid"]
    UID_FIELD_NUMBER: _ClassVar[int]
    uid: str
    def __init__(self, uid: _Optional[str] = ...) -> None: ...

class DeleteUserResponse(_message.Message):
    __slots__ = ["bans_dropped", "groups_left", "last_seq"]
    BANS_DROPPED_FIELD_NUMBER: _ClassVar[int]
    GROUPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    bans_dropped: int
    groups_left: int
    last_seq: int
    def __init__(self, groups_left: _Optional[int] = ..., bans_dropped: _Optional[int] = ..., last_seq: _Optional[int] = ...) -> None: ...

class DeleteWebhookRequest(_message.Message):
    __slots__ = ["id"]
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteWebhookResponse(_message.Message):
    __slots__ = ["webhook"]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    webhook: _webhooks_pb2.Webhook
    def __init__(self, webhook: _Optional[_Union[_webhooks_pb2.Webhook, _Mapping]] = ...) -> None: ...

class FreezeGroupRequest(_message.Message):
    __slots__ = ["guid", "reason"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    guid: str
    reason: str
    def __init__(self, guid: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class FreezeGroupResponse(_message.Message):
    __slots__ = ["action", "group"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    group: _groups_pb2.Group
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...

class GetGroupRequest(_message.Message):
    __slots__ = ["guid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    def __init__(self, guid: _Optional[str] = ...) -> None: ...

class GetGroupResponse(_message.Message):
    __slots__ = ["group"]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    group: _groups_pb2.Group
    def __init__(self, group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...

class GetMemberStateRequest(_message.Message):
    __slots__ = ["guid", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class GetMemberStateResponse(_message.Message):
    __slots__ = ["ban", "group_version", "is_banned", "is_member", "is_owner", "joined_at", "mute_reason", "muted_until", "scope"]
    BAN_FIELD_NUMBER: _ClassVar[int]
    GROUP_VERSION_FIELD_NUMBER: _ClassVar[int]
    IS_BANNED_FIELD_NUMBER: _ClassVar[int]
    IS_MEMBER_FIELD_NUMBER: _ClassVar[int]
    IS_OWNER_FIELD_NUMBER: _ClassVar[int]
    JOINED_AT_FIELD_NUMBER: _ClassVar[int]
    MUTED_UNTIL_FIELD_NUMBER: _ClassVar[int]
    MUTE_REASON_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    ban: _members_pb2.BannedMember
    group_version: int
    is_banned: bool
    is_member: bool
    is_owner: bool
    joined_at: int
    mute_reason: str
    muted_until: int
    scope: _members_pb2.Scope
    def __init__(self, is_member: bool = ..., scope: _Optional[_Union[_members_pb2.Scope, str]] = ..., joined_at: _Optional[int] = ..., is_owner: bool = ..., is_banned: bool = ..., ban: _Optional[_Union[_members_pb2.BannedMember, _Mapping]] = ..., group_version: _Optional[int] = ..., muted_until: _Optional[int] = ..., mute_reason: _Optional[str] = ...) -> None: ...

class GetUserRequest(_message.Message):
    __slots__ = ["uid"]
    UID_FIELD_NUMBER: _ClassVar[int]
    uid: str
    def __init__(self, uid: _Optional[str] = ...) -> None: ...

class GetUserResponse(_message.Message):
    __slots__ = ["user"]
    USER_FIELD_NUMBER: _ClassVar[int]
    user: _users_pb2.User
    def __init__(self, user: _Optional[_Union[_users_pb2.User, _Mapping]] = ...) -> None: ...

class InviteMembersRequest(_message.Message):
    __slots__ = ["expires_in_ms", "guid", "members"]
    EXPIRES_IN_MS_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    expires_in_ms: int
    guid: str
    members: _containers.RepeatedCompositeFieldContainer[_members_pb2.MemberToAdd]
    def __init__(self, guid: _Optional[str] = ..., members: _Optional[_Iterable[_Union[_members_pb2.MemberToAdd, _Mapping]]] = ..., expires_in_ms: _Optional[int] = ...) -> None: ...

class InviteMembersResponse(_message.Message):
    __slots__ = ["results"]
    class ResultsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _members_pb2.UserResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_members_pb2.UserResult, _Mapping]] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.MessageMap[str, _members_pb2.UserResult]
    def __init__(self, results: _Optional[_Mapping[str, _members_pb2.UserResult]] = ...) -> None: ...

class JoinGroupRequest(_message.Message):
    __slots__ = ["guid", "password"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    guid: str
    password: str
    def __init__(self, guid: _Optional[str] = ..., password: _Optional[str] = ...) -> None: ...

class JoinGroupResponse(_message.Message):
    __slots__ = ["action", "group"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    group: _groups_pb2.Group
    def __init__(self, group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class KickMemberRequest(_message.Message):
    __slots__ = ["guid", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class KickMemberResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class LeaveGroupRequest(_message.Message):
    __slots__ = ["guid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    def __init__(self, guid: _Optional[str] = ...) -> None: ...

class LeaveGroupResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class ListAppBansRequest(_message.Message):
    __slots__ = ["cursor", "limit", "search"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SEARCH_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    limit: int
    search: str
    def __init__(self, limit: _Optional[int] = ..., cursor: _Optional[str] = ..., search: _Optional[str] = ...) -> None: ...

class ListAppBansResponse(_message.Message):
    __slots__ = ["app_bans", "next_cursor"]
    APP_BANS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    app_bans: _containers.RepeatedCompositeFieldContainer[_members_pb2.AppBan]
    next_cursor: str
    def __init__(self, app_bans: _Optional[_Iterable[_Union[_members_pb2.AppBan, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListBannedMembersRequest(_message.Message):
    __slots__ = ["cursor", "guid", "limit", "search"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SEARCH_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    guid: str
    limit: int
    search: str
    def __init__(self, guid: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ..., search: _Optional[str] = ...) -> None: ...

class ListBannedMembersResponse(_message.Message):
    __slots__ = ["banned_members", "next_cursor"]
    BANNED_MEMBERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    banned_members: _containers.RepeatedCompositeFieldContainer[_members_pb2.BannedMember]
    next_cursor: str
    def __init__(self, banned_members: _Optional[_Iterable[_Union[_members_pb2.BannedMember, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListContentRulesRequest(_message.Message):
    __slots__ = ["cursor", "guid", "limit"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    guid: str
    limit: int
    def __init__(self, guid: _Optional[str] = ..., cursor: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ListContentRulesResponse(_message.Message):
    __slots__ = ["next_cursor", "rules"]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    next_cursor: str
    rules: _containers.RepeatedCompositeFieldContainer[_content_pb2.ContentRule]
    def __init__(self, rules: _Optional[_Iterable[_Union[_content_pb2.ContentRule, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListGroupActionsRequest(_message.Message):
    __slots__ = ["actions", "actor", "after_seq", "cursor", "guid", "limit", "target"]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedScalarFieldContainer[_actions_pb2.ActionType]
    actor: str
    after_seq: int
    cursor: str
    guid: str
    limit: int
    target: str
    def __init__(self, guid: _Optional[str] = ..., after_seq: _Optional[int] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ..., actions: _Optional[_Iterable[_Union[_actions_pb2.ActionType, str]]] = ..., actor: _Optional[str] = ..., target: _Optional[str] = ...) -> None: ...

class ListGroupActionsResponse(_message.Message):
    __slots__ = ["actions", "last_seq", "next_cursor"]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[_actions_pb2.Action]
    last_seq: int
    next_cursor: str
    def __init__(self, actions: _Optional[_Iterable[_Union[_actions_pb2.Action, _Mapping]]] = ..., next_cursor: _Optional[str] = ..., last_seq: _Optional[int] = ...) -> None: ...

class ListGroupsRequest(_message.Message):
    __slots__ = ["cursor", "joined_only", "limit", "search", "tags", "types"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    JOINED_ONLY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SEARCH_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    joined_only: bool
    limit: int
    search: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    types: _containers.RepeatedScalarFieldContainer[_groups_pb2.GroupType]
    def __init__(self, limit: _Optional[int] = ..., cursor: _Optional[str] = ..., search: _Optional[str] = ..., joined_only: bool = ..., types: _Optional[_Iterable[_Union[_groups_pb2.GroupType, str]]] = ..., tags: _Optional[_Iterable[str]] = ...) -> None: ...

class ListGroupsResponse(_message.Message):
    __slots__ = ["groups", "next_cursor"]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[_groups_pb2.Group]
    next_cursor: str
    def __init__(self, groups: _Optional[_Iterable[_Union[_groups_pb2.Group, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListInvitesRequest(_message.Message):
    __slots__ = ["cursor", "guid", "limit"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    guid: str
    limit: int
    def __init__(self, guid: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListInvitesResponse(_message.Message):
    __slots__ = ["invites", "next_cursor"]
    INVITES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    invites: _containers.RepeatedCompositeFieldContainer[_invites_pb2.Invite]
    next_cursor: str
    def __init__(self, invites: _Optional[_Iterable[_Union[_invites_pb2.Invite, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListJoinRequestsRequest(_message.Message):
    __slots__ = ["cursor", "guid", "limit"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    guid: str
    limit: int
    def __init__(self, guid: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListJoinRequestsResponse(_message.Message):
    __slots__ = ["join_requests", "next_cursor"]
    JOIN_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    join_requests: _containers.RepeatedCompositeFieldContainer[_members_pb2.JoinRequest]
    next_cursor: str
    def __init__(self, join_requests: _Optional[_Iterable[_Union[_members_pb2.JoinRequest, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListMembersRequest(_message.Message):
    __slots__ = ["cursor", "guid", "limit", "muted_only", "scopes", "search"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MUTED_ONLY_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SEARCH_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    guid: str
    limit: int
    muted_only: bool
    scopes: _containers.RepeatedScalarFieldContainer[_members_pb2.Scope]
    search: str
    def __init__(self, guid: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ..., scopes: _Optional[_Iterable[_Union[_members_pb2.Scope, str]]] = ..., search: _Optional[str] = ..., muted_only: bool = ...) -> None: ...

class ListMembersResponse(_message.Message):
    __slots__ = ["members", "next_cursor"]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    members: _containers.RepeatedCompositeFieldContainer[_members_pb2.GroupMember]
    next_cursor: str
    def __init__(self, members: _Optional[_Iterable[_Union[_members_pb2.GroupMember, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListMyInvitesRequest(_message.Message):
    __slots__ = ["cursor", "limit"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    limit: int
    def __init__(self, limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListMyInvitesResponse(_message.Message):
    __slots__ = ["invites", "next_cursor"]
    INVITES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    invites: _containers.RepeatedCompositeFieldContainer[_invites_pb2.Invite]
    next_cursor: str
    def __init__(self, invites: _Optional[_Iterable[_Union[_invites_pb2.Invite, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListReportsRequest(_message.Message):
    __slots__ = ["cursor", "guid", "limit", "status"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    guid: str
    limit: int
    status: _reports_pb2.ReportStatus
    def __init__(self, guid: _Optional[str] = ..., status: _Optional[_Union[_reports_pb2.ReportStatus, str]] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListReportsResponse(_message.Message):
    __slots__ = ["counts", "next_cursor", "reports"]
    class CountsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    REPORTS_FIELD_NUMBER: _ClassVar[int]
    counts: _containers.ScalarMap[str, int]
    next_cursor: str
    reports: _containers.RepeatedCompositeFieldContainer[_reports_pb2.Report]
    def __init__(self, reports: _Optional[_Iterable[_Union[_reports_pb2.Report, _Mapping]]] = ..., next_cursor: _Optional[str] = ..., counts: _Optional[_Mapping[str, int]] = ...) -> None: ...

class ListWebhooksRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListWebhooksResponse(_message.Message):
    __slots__ = ["webhooks"]
    WEBHOOKS_FIELD_NUMBER: _ClassVar[int]
    webhooks: _containers.RepeatedCompositeFieldContainer[_webhooks_pb2.Webhook]
    def __init__(self, webhooks: _Optional[_Iterable[_Union[_webhooks_pb2.Webhook, _Mapping]]] = ...) -> None: ...

class MuteMemberRequest(_message.Message):
    __slots__ = ["duration_ms", "guid", "if_not_muted", "reason", "uid"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    IF_NOT_MUTED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    guid: str
    if_not_muted: bool
    reason: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., reason: _Optional[str] = ..., duration_ms: _Optional[int] = ..., if_not_muted: bool = ...) -> None: ...

class MuteMemberResponse(_message.Message):
    __slots__ = ["action", "changed", "member"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    MEMBER_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    changed: bool
    member: _members_pb2.GroupMember
    def __init__(self, changed: bool = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., member: _Optional[_Union[_members_pb2.GroupMember, _Mapping]] = ...) -> None: ...

class PostCheck(_message.Message):
    __slots__ = ["guid", "text", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    text: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class PostCheckResult(_message.Message):
    __slots__ = ["allowed", "error_code", "flagged", "matches", "muted_until", "shadowed"]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    FLAGGED_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    MUTED_UNTIL_FIELD_NUMBER: _ClassVar[int]
    SHADOWED_FIELD_NUMBER: _ClassVar[int]
    allowed: bool
    error_code: str
    flagged: bool
    matches: _containers.RepeatedCompositeFieldContainer[_content_pb2.ContentMatch]
    muted_until: int
    shadowed: bool
    def __init__(self, allowed: bool = ..., error_code: _Optional[str] = ..., muted_until: _Optional[int] = ..., shadowed: bool = ..., flagged: bool = ..., matches: _Optional[_Iterable[_Union[_content_pb2.ContentMatch, _Mapping]]] = ...) -> None: ...

class RejectJoinRequestRequest(_message.Message):
    __slots__ = ["guid", "reason", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    reason: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RejectJoinRequestResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class ReplayWebhookRequest(_message.Message):
    __slots__ = ["after_seq", "id"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    id: str
    def __init__(self, id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class ReplayWebhookResponse(_message.Message):
    __slots__ = ["webhook"]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    webhook: _webhooks_pb2.Webhook
    def __init__(self, webhook: _Optional[_Union[_webhooks_pb2.Webhook, _Mapping]] = ...) -> None: ...

class ReportMemberRequest(_message.Message):
    __slots__ = ["category", "guid", "text", "uid"]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    category: _reports_pb2.ReportCategory
    guid: str
    text: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., category: _Optional[_Union[_reports_pb2.ReportCategory, str]] = ..., text: _Optional[str] = ...) -> None: ...

class ReportMemberResponse(_message.Message):
    __slots__ = ["action", "report"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    report: _reports_pb2.Report
    def __init__(self, report: _Optional[_Union[_reports_pb2.Report, _Mapping]] = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class RequestToJoinRequest(_message.Message):
    __slots__ = ["guid", "message"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    guid: str
    message: str
    def __init__(self, guid: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class RequestToJoinResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class ResolveReportRequest(_message.Message):
    __slots__ = ["guid", "note", "report_id", "resolution"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    REPORT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    guid: str
    note: str
    report_id: int
    resolution: _reports_pb2.ReportResolution
    def __init__(self, guid: _Optional[str] = ..., report_id: _Optional[int] = ..., resolution: _Optional[_Union[_reports_pb2.ReportResolution, str]] = ..., note: _Optional[str] = ...) -> None: ...

class ResolveReportResponse(_message.Message):
    __slots__ = ["action", "report"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    report: _reports_pb2.Report
    def __init__(self, report: _Optional[_Union[_reports_pb2.Report, _Mapping]] = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class RevokeInviteRequest(_message.Message):
    __slots__ = ["guid", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class RevokeInviteResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ["actions", "after_seq", "guids", "user_uid", "whole_app"]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    GUIDS_FIELD_NUMBER: _ClassVar[int]
    USER_UID_FIELD_NUMBER: _ClassVar[int]
    WHOLE_APP_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedScalarFieldContainer[_actions_pb2.ActionType]
    after_seq: int
    guids: _containers.RepeatedScalarFieldContainer[str]
    user_uid: str
    whole_app: bool
    def __init__(self, user_uid: _Optional[str] = ..., guids: _Optional[_Iterable[str]] = ..., whole_app: bool = ..., actions: _Optional[_Iterable[_Union[_actions_pb2.ActionType, str]]] = ..., after_seq: _Optional[int] = ...) -> None: ...

class SubscribeResponse(_message.Message):
    __slots__ = ["action", "started"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    started: SubscriptionStarted
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., started: _Optional[_Union[SubscriptionStarted, _Mapping]] = ...) -> None: ...

class SubscriptionStarted(_message.Message):
    __slots__ = ["after_seq", "head_seq"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    head_seq: int
    def __init__(self, after_seq: _Optional[int] = ..., head_seq: _Optional[int] = ...) -> None: ...

class TestWebhookRequest(_message.Message):
    __slots__ = ["id"]
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class TestWebhookResponse(_message.Message):
    __slots__ = ["error", "http_status", "http_version", "latency_ms"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    HTTP_VERSION_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    error: str
    http_status: int
    http_version: str
    latency_ms: int
    def __init__(self, http_status: _Optional[int] = ..., latency_ms: _Optional[int] = ..., error: _Optional[str] = ..., http_version: _Optional[str] = ...) -> None: ...

class TransferOwnershipRequest(_message.Message):
    __slots__ = ["guid", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class TransferOwnershipResponse(_message.Message):
    __slots__ = ["action", "group"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    group: _groups_pb2.Group
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...

class UnbanMemberRequest(_message.Message):
    __slots__ = ["guid", "only_if_banned", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    ONLY_IF_BANNED_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    only_if_banned: bool
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., only_if_banned: bool = ...) -> None: ...

class UnbanMemberResponse(_message.Message):
    __slots__ = ["action", "changed"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    changed: bool
    def __init__(self, changed: bool = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class UnbanUserFromAppRequest(_message.Message):
    __slots__ = ["uid"]
    UID_FIELD_NUMBER: _ClassVar[int]
    uid: str
    def __init__(self, uid: _Optional[str] = ...) -> None: ...

class UnbanUserFromAppResponse(_message.Message):
    __slots__ = ["action"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class UnfreezeGroupRequest(_message.Message):
    __slots__ = ["guid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    def __init__(self, guid: _Optional[str] = ...) -> None: ...

class UnfreezeGroupResponse(_message.Message):
    __slots__ = ["action", "group"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    group: _groups_pb2.Group
    def __init__(self, action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ..., group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...

class UnmuteMemberRequest(_message.Message):
    __slots__ = ["guid", "only_if_muted", "uid"]
    GUID_FIELD_NUMBER: _ClassVar[int]
    ONLY_IF_MUTED_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    guid: str
    only_if_muted: bool
    uid: str
    def __init__(self, guid: _Optional[str] = ..., uid: _Optional[str] = ..., only_if_muted: bool = ...) -> None: ...

class UnmuteMemberResponse(_message.Message):
    __slots__ = ["action", "changed"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    action: _actions_pb2.Action
    changed: bool
    def __init__(self, changed: bool = ..., action: _Optional[_Union[_actions_pb2.Action, _Mapping]] = ...) -> None: ...

class UpdateGroupRequest(_message.Message):
    __slots__ = ["description", "guid", "icon", "if_version", "join_requests", "metadata", "name", "password", "tags", "type", "update_mask"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    ICON_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    JOIN_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    description: str
    guid: str
    icon: str
    if_version: int
    join_requests: bool
    metadata: _containers.ScalarMap[str, str]
    name: str
    password: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    type: _groups_pb2.GroupType
    update_mask: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, guid: _Optional[str] = ..., name: _Optional[str] = ..., icon: _Optional[str] = ..., description: _Optional[str] = ..., type: _Optional[_Union[_groups_pb2.GroupType, str]] = ..., password: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Iterable[str]] = ..., update_mask: _Optional[_Iterable[str]] = ..., if_version: _Optional[int] = ..., join_requests: bool = ...) -> None: ...

class UpdateGroupResponse(_message.Message):
    __slots__ = ["group"]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    group: _groups_pb2.Group
    def __init__(self, group: _Optional[_Union[_groups_pb2.Group, _Mapping]] = ...) -> None: ...

class UpdateUserRequest(_message.Message):
    __slots__ = ["avatar", "metadata", "name", "uid", "update_mask"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    AVATAR_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    avatar: str
    metadata: _containers.ScalarMap[str, str]
    name: str
    uid: str
    update_mask: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, uid: _Optional[str] = ..., name: _Optional[str] = ..., avatar: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., update_mask: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateUserResponse(_message.Message):
    __slots__ = ["user"]
    USER_FIELD_NUMBER: _ClassVar[int]
    user: _users_pb2.User
    def __init__(self, user: _Optional[_Union[_users_pb2.User, _Mapping]] = ...) -> None: ...

class UpdateWebhookRequest(_message.Message):
    __slots__ = ["description", "enabled", "guids", "id", "kinds", "update_mask", "url"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    GUIDS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    description: str
    enabled: bool
    guids: _containers.RepeatedScalarFieldContainer[str]
    id: str
    kinds: _containers.RepeatedScalarFieldContainer[_actions_pb2.ActionType]
    update_mask: _containers.RepeatedScalarFieldContainer[str]
    url: str
    def __init__(self, id: _Optional[str] = ..., url: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[_actions_pb2.ActionType, str]]] = ..., guids: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., enabled: bool = ..., update_mask: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateWebhookResponse(_message.Message):
    __slots__ = ["webhook"]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    webhook: _webhooks_pb2.Webhook
    def __init__(self, webhook: _Optional[_Union[_webhooks_pb2.Webhook, _Mapping]] = ...) -> None: ...
