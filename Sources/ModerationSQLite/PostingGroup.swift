internal import Moderation

/// What CheckPost needs of a group, as a reader keeps it for its snapshot
/// (`SQLiteSession.postingGroups`).
struct PostingGroup {
    let id: Int64
    let type: GroupType
    let frozen: Bool
    /// The group's version in the snapshot: what `PostingCache` entries are checked against.
    let version: UInt64
}

/// A group of an app, by guid: the key of `SQLiteSession.postingGroups`.
struct PostingGroupKey: Hashable {
    let appID: Int64
    let guid: String
}
