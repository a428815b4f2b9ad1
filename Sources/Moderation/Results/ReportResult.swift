/// What `ReportMember` and `ResolveReport` return: the report and the action recorded.
public struct ReportResult: Sendable, Equatable {
    public var report: Report
    public var action: ActionRecord
}
