/// One page of `ListReports`, with how many reports of that status the group has per target.
public struct ReportPage: Sendable, Equatable {
    public var page: Page<Report>
    /// Reports of the status asked, per reported uid, over the whole group.
    public var counts: [String: Int]
}
