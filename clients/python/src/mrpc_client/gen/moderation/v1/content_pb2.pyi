from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

CONTENT_ACTION_BLOCK: ContentAction
CONTENT_ACTION_FLAG: ContentAction
CONTENT_ACTION_UNSPECIFIED: ContentAction
CONTENT_RULE_KIND_DOMAIN: ContentRuleKind
CONTENT_RULE_KIND_REGEX: ContentRuleKind
CONTENT_RULE_KIND_UNSPECIFIED: ContentRuleKind
CONTENT_RULE_KIND_WORD: ContentRuleKind
DESCRIPTOR: _descriptor.FileDescriptor

class ContentMatch(_message.Message):
    __slots__ = ["end", "rule_id", "start"]
    END_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    end: int
    rule_id: int
    start: int
    def __init__(self, rule_id: _Optional[int] = ..., start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class ContentRule(_message.Message):
    __slots__ = ["action", "created_at", "created_by", "description", "guid", "id", "kind", "pattern"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    action: ContentAction
    created_at: int
    created_by: str
    description: str
    guid: str
    id: int
    kind: ContentRuleKind
    pattern: str
    def __init__(self, id: _Optional[int] = ..., guid: _Optional[str] = ..., kind: _Optional[_Union[ContentRuleKind, str]] = ..., pattern: _Optional[str] = ..., action: _Optional[_Union[ContentAction, str]] = ..., description: _Optional[str] = ..., created_at: _Optional[int] = ..., created_by: _Optional[str] = ...) -> None: ...

class ContentRuleResult(_message.Message):
    __slots__ = ["changed", "error_code", "id", "message", "ok", "rule"]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    changed: bool
    error_code: str
    id: int
    message: str
    ok: bool
    rule: ContentRule
    def __init__(self, ok: bool = ..., changed: bool = ..., error_code: _Optional[str] = ..., message: _Optional[str] = ..., rule: _Optional[_Union[ContentRule, _Mapping]] = ..., id: _Optional[int] = ...) -> None: ...

class NewContentRule(_message.Message):
    __slots__ = ["action", "description", "kind", "pattern"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    action: ContentAction
    description: str
    kind: ContentRuleKind
    pattern: str
    def __init__(self, kind: _Optional[_Union[ContentRuleKind, str]] = ..., pattern: _Optional[str] = ..., action: _Optional[_Union[ContentAction, str]] = ..., description: _Optional[str] = ...) -> None: ...

class ContentRuleKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ContentAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
