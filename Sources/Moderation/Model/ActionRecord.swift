/// One entry of an app's action log: a committed change, for the event stream and
/// `ListGroupActions` ("missed events").
///
/// Every committed change appends one record per affected user in the same transaction. `seq`
/// increases strictly per app without gaps visible to readers.
///
/// A value type whose fields live in one shared, copy-on-write box: a record is copied many
/// times on its way (into its batch, the reply, the event hub's queue, a subscription's buffer),
/// and copying the fields themselves retained every string of two users and a group — 15 k
/// instructions of a mutation's 124 k went to copying and destroying records.
public struct ActionRecord: Sendable, Equatable {
    /// Not private, for the `@inlinable` getters: with them `action.group.guid`
    /// in another module loads one string instead of copying the whole group out of the box
    /// (the event fan-out asks that of every subscriber).
    @usableFromInline var box: Box

    /// The fields. `@unchecked Sendable`: a box is only written through `uniqueBox()`, when no
    /// other record holds it, so a box another thread can see is never written.
    @usableFromInline final class Box: @unchecked Sendable {
        @usableFromInline var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    @usableFromInline struct Fields: Equatable {
        @usableFromInline var app: String
        @usableFromInline var seq: UInt64
        @usableFromInline var kind: ActionKind
        @usableFromInline var actionBy: User
        @usableFromInline var actionOn: User?
        @usableFromInline var group: Group
        @usableFromInline var oldScope: Scope?
        @usableFromInline var newScope: Scope?
        @usableFromInline var reason: String
        @usableFromInline var expiresAt: Int64
        @usableFromInline var timestamp: Int64
        @usableFromInline var idempotencyKey: String
        @usableFromInline var requestID: String
        @usableFromInline var reportID: UInt64
        @usableFromInline var shadow: Bool
        @usableFromInline var rulesAdded: Int
        @usableFromInline var rulesRemoved: Int
    }

    /// The box, first copied when another record shares it.
    private mutating func uniqueBox() -> Box {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
        return box
    }

    /// The app (tenant) whose log holds the record.
    public var app: String {
        @inlinable get { box.fields.app }
        set { uniqueBox().fields.app = newValue }
    }

    /// Position in the app's log.
    public var seq: UInt64 {
        @inlinable get { box.fields.seq }
        set { uniqueBox().fields.seq = newValue }
    }

    public var kind: ActionKind {
        @inlinable get { box.fields.kind }
        set { uniqueBox().fields.kind = newValue }
    }

    /// Who did it; `User.app` ("@app") for the app.
    public var actionBy: User {
        @inlinable get { box.fields.actionBy }
        set { uniqueBox().fields.actionBy = newValue }
    }

    /// Whom it was done to (the owner for `created`; nil for `updated` and `deleted`).
    public var actionOn: User? {
        @inlinable get { box.fields.actionOn }
        set { uniqueBox().fields.actionOn = newValue }
    }

    /// The group right after the change (for `deleted`: as it was before); `Group.appWide` for the
    /// actions of the whole app (`isAppWide`).
    public var group: Group {
        @inlinable get { box.fields.group }
        set { uniqueBox().fields.group = newValue }
    }

    /// Scope of `actionOn` before the change, where it applies.
    public var oldScope: Scope? {
        @inlinable get { box.fields.oldScope }
        set { uniqueBox().fields.oldScope = newValue }
    }

    /// Scope of `actionOn` after the change, where it applies.
    public var newScope: Scope? {
        @inlinable get { box.fields.newScope }
        set { uniqueBox().fields.newScope = newValue }
    }

    /// Reason given (bans; "expired" for an unban by expiry).
    public var reason: String {
        @inlinable get { box.fields.reason }
        set { uniqueBox().fields.reason = newValue }
    }

    /// Expiry of a ban, Unix milliseconds; 0 for permanent or not a ban.
    public var expiresAt: Int64 {
        @inlinable get { box.fields.expiresAt }
        set { uniqueBox().fields.expiresAt = newValue }
    }

    /// When the change was made, Unix milliseconds.
    public var timestamp: Int64 {
        @inlinable get { box.fields.timestamp }
        set { uniqueBox().fields.timestamp = newValue }
    }

    /// Idempotency key of the call that caused it; empty when none.
    public var idempotencyKey: String {
        @inlinable get { box.fields.idempotencyKey }
        set { uniqueBox().fields.idempotencyKey = newValue }
    }

    /// Request id of the call that caused it; empty when none.
    public var requestID: String {
        @inlinable get { box.fields.requestID }
        set { uniqueBox().fields.requestID = newValue }
    }

    /// The report a `reported` or `reportResolved` action is about; 0 for other actions.
    public var reportID: UInt64 {
        @inlinable get { box.fields.reportID }
        set { uniqueBox().fields.reportID = newValue }
    }

    /// For `appBanned` and `appUnbanned`: the ban is (was) a shadow ban; false for other actions.
    public var shadow: Bool {
        @inlinable get { box.fields.shadow }
        set { uniqueBox().fields.shadow = newValue }
    }

    /// For `contentRulesChanged`: how many rules were added; 0 for other actions.
    public var rulesAdded: Int {
        @inlinable get { box.fields.rulesAdded }
        set { uniqueBox().fields.rulesAdded = newValue }
    }

    /// For `contentRulesChanged`: how many rules were deleted; 0 for other actions.
    public var rulesRemoved: Int {
        @inlinable get { box.fields.rulesRemoved }
        set { uniqueBox().fields.rulesRemoved = newValue }
    }

    public init(
        app: String, seq: UInt64 = 0, kind: ActionKind, actionBy: User, actionOn: User?, group: Group,
        oldScope: Scope? = nil, newScope: Scope? = nil, reason: String = "", expiresAt: Int64 = 0,
        timestamp: Int64, idempotencyKey: String = "", requestID: String = "", reportID: UInt64 = 0,
        shadow: Bool = false, rulesAdded: Int = 0, rulesRemoved: Int = 0
    ) {
        box = Box(
            Fields(
                app: app, seq: seq, kind: kind, actionBy: actionBy, actionOn: actionOn, group: group,
                oldScope: oldScope, newScope: newScope, reason: reason, expiresAt: expiresAt, timestamp: timestamp,
                idempotencyKey: idempotencyKey, requestID: requestID, reportID: reportID, shadow: shadow,
                rulesAdded: rulesAdded, rulesRemoved: rulesRemoved))
    }

    public static func == (lhs: ActionRecord, rhs: ActionRecord) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }
}
