/// One entry of an app's action log: a committed change, for the event stream and
/// `ListGroupActions` ("missed events").
///
/// Every committed change appends one record per affected user in the same transaction. `seq`
/// increases strictly per app without gaps visible to readers.
public struct ActionRecord: Sendable, Equatable {
    /// The app (tenant) whose log holds the record.
    public var app: String
    /// Position in the app's log.
    public var seq: UInt64
    public var kind: ActionKind
    /// Who did it; `User.app` ("@app") for the app.
    public var actionBy: User
    /// Whom it was done to (the owner for `created`; nil for `updated` and `deleted`).
    public var actionOn: User?
    /// The group right after the change (for `deleted`: as it was before).
    public var group: Group
    /// Scope of `actionOn` before the change, where it applies.
    public var oldScope: Scope?
    /// Scope of `actionOn` after the change, where it applies.
    public var newScope: Scope?
    /// Reason given (bans; "expired" for an unban by expiry).
    public var reason: String
    /// Expiry of a ban, Unix milliseconds; 0 for permanent or not a ban.
    public var expiresAt: Int64
    /// When the change was made, Unix milliseconds.
    public var timestamp: Int64
    /// Idempotency key of the call that caused it; empty when none.
    public var idempotencyKey: String
    /// Request id of the call that caused it; empty when none.
    public var requestID: String
    /// The report a `reported` or `reportResolved` action is about; 0 for other actions.
    public var reportID: UInt64

    public init(
        app: String, seq: UInt64 = 0, kind: ActionKind, actionBy: User, actionOn: User?, group: Group,
        oldScope: Scope? = nil, newScope: Scope? = nil, reason: String = "", expiresAt: Int64 = 0,
        timestamp: Int64, idempotencyKey: String = "", requestID: String = "", reportID: UInt64 = 0
    ) {
        self.app = app
        self.seq = seq
        self.kind = kind
        self.actionBy = actionBy
        self.actionOn = actionOn
        self.group = group
        self.oldScope = oldScope
        self.newScope = newScope
        self.reason = reason
        self.expiresAt = expiresAt
        self.timestamp = timestamp
        self.idempotencyKey = idempotencyKey
        self.requestID = requestID
        self.reportID = reportID
    }
}
