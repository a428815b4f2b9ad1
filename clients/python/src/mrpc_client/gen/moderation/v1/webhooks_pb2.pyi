from mrpc_client.gen.moderation.v1 import actions_pb2 as _actions_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
WEBHOOK_STATE_ACTIVE: WebhookState
WEBHOOK_STATE_DISABLED: WebhookState
WEBHOOK_STATE_FAILING: WebhookState
WEBHOOK_STATE_UNSPECIFIED: WebhookState

class Webhook(_message.Message):
    __slots__ = ["created_at", "description", "enabled", "guids", "id", "kinds", "status", "url"]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    GUIDS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    created_at: int
    description: str
    enabled: bool
    guids: _containers.RepeatedScalarFieldContainer[str]
    id: str
    kinds: _containers.RepeatedScalarFieldContainer[_actions_pb2.ActionType]
    status: WebhookStatus
    url: str
    def __init__(self, id: _Optional[str] = ..., url: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[_actions_pb2.ActionType, str]]] = ..., guids: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., enabled: bool = ..., created_at: _Optional[int] = ..., status: _Optional[_Union[WebhookStatus, _Mapping]] = ...) -> None: ...

class WebhookStatus(_message.Message):
    __slots__ = ["consecutive_failures", "last_delivered_seq", "last_error", "next_attempt_at", "state"]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    LAST_DELIVERED_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    consecutive_failures: int
    last_delivered_seq: int
    last_error: str
    next_attempt_at: int
    state: WebhookState
    def __init__(self, state: _Optional[_Union[WebhookState, str]] = ..., last_delivered_seq: _Optional[int] = ..., consecutive_failures: _Optional[int] = ..., last_error: _Optional[str] = ..., next_attempt_at: _Optional[int] = ...) -> None: ...

class WebhookState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
