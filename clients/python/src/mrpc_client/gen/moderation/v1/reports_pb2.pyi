from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
REPORT_CATEGORY_HARASSMENT: ReportCategory
REPORT_CATEGORY_HATE: ReportCategory
REPORT_CATEGORY_OTHER: ReportCategory
REPORT_CATEGORY_SPAM: ReportCategory
REPORT_CATEGORY_UNSPECIFIED: ReportCategory
REPORT_CATEGORY_VIOLENCE: ReportCategory
REPORT_RESOLUTION_ACTIONED: ReportResolution
REPORT_RESOLUTION_DISMISSED: ReportResolution
REPORT_RESOLUTION_UNSPECIFIED: ReportResolution
REPORT_STATUS_OPEN: ReportStatus
REPORT_STATUS_RESOLVED: ReportStatus
REPORT_STATUS_UNSPECIFIED: ReportStatus

class Report(_message.Message):
    __slots__ = ["category", "created_at", "guid", "note", "report_id", "reporter", "resolution", "resolved_at", "resolved_by", "status", "target", "text"]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    GUID_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    REPORTER_FIELD_NUMBER: _ClassVar[int]
    REPORT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_AT_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_BY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    category: ReportCategory
    created_at: int
    guid: str
    note: str
    report_id: int
    reporter: str
    resolution: ReportResolution
    resolved_at: int
    resolved_by: str
    status: ReportStatus
    target: str
    text: str
    def __init__(self, report_id: _Optional[int] = ..., guid: _Optional[str] = ..., reporter: _Optional[str] = ..., target: _Optional[str] = ..., category: _Optional[_Union[ReportCategory, str]] = ..., text: _Optional[str] = ..., status: _Optional[_Union[ReportStatus, str]] = ..., resolution: _Optional[_Union[ReportResolution, str]] = ..., note: _Optional[str] = ..., created_at: _Optional[int] = ..., resolved_at: _Optional[int] = ..., resolved_by: _Optional[str] = ...) -> None: ...

class ReportCategory(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ReportStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ReportResolution(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
