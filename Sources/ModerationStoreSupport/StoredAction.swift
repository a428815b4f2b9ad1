public import Moderation

/// An action as both stores read it back from a row of `actions`: the stored columns, before its
/// users and the group revision it shows are resolved, and how those make its `ActionRecord`.
public struct StoredAction: Sendable {
    public var seq: UInt64
    /// The group's key (`StoredGroup.appWide.id` for an action of the whole app).
    public var groupID: Int64
    /// The group revision the action shows.
    public var revision: UInt64
    public var kind: ActionKind
    public var by: String
    public var on: String?
    public var membersCount: Int
    public var version: UInt64
    public var oldScope: Scope?
    public var newScope: Scope?
    public var reason: String
    public var expiresAt: Int64
    public var timestamp: Int64
    public var idempotencyKey: String
    public var requestID: String
    public var reportID: UInt64
    public var shadow: Bool
    public var rulesAdded: Int
    public var rulesRemoved: Int

    public init(
        seq: UInt64, groupID: Int64, revision: UInt64, kind: ActionKind, by: String, on: String?, membersCount: Int,
        version: UInt64, oldScope: Scope?, newScope: Scope?, reason: String, expiresAt: Int64, timestamp: Int64,
        idempotencyKey: String, requestID: String, reportID: UInt64, shadow: Bool, rulesAdded: Int, rulesRemoved: Int
    ) {
        self.seq = seq
        self.groupID = groupID
        self.revision = revision
        self.kind = kind
        self.by = by
        self.on = on
        self.membersCount = membersCount
        self.version = version
        self.oldScope = oldScope
        self.newScope = newScope
        self.reason = reason
        self.expiresAt = expiresAt
        self.timestamp = timestamp
        self.idempotencyKey = idempotencyKey
        self.requestID = requestID
        self.reportID = reportID
        self.shadow = shadow
        self.rulesAdded = rulesAdded
        self.rulesRemoved = rulesRemoved
    }

    /// Whether the action is of a group; one of the whole app (group key 0) shows no group.
    public var isOfGroup: Bool { groupID != StoredGroup.appWide.id }

    /// The record of `app`'s action: the group is `revision` (the store's row of `groupID` at
    /// `revision`; not read for an action of the whole app) with the member count and version
    /// the action recorded; `by` and `on` are its users resolved.
    public func record(app: String, revision: Group?, by: User, on: User?) -> ActionRecord {
        var group: Group = .appWide
        if isOfGroup, let revision {
            group = revision
            group.membersCount = membersCount
            group.version = version
        }
        return ActionRecord(
            app: app, seq: seq, kind: kind, actionBy: by, actionOn: on, group: group, oldScope: oldScope,
            newScope: newScope, reason: reason, expiresAt: expiresAt, timestamp: timestamp,
            idempotencyKey: idempotencyKey, requestID: requestID, reportID: reportID, shadow: shadow,
            rulesAdded: rulesAdded, rulesRemoved: rulesRemoved)
    }
}
