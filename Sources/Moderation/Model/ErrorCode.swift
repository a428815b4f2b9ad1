/// A machine-readable error code of the moderation service, such as `ERR_GROUP_NOT_FOUND`.
///
/// A struct rather than an enum (as grpc-swift-2's `RPCError.Code`) so codes can be added without
/// breaking callers that switch over them. `name` is what travels in `Status.error_code`;
/// `status` is the canonical status the RPC layer sends with it
/// (proto/moderation/v1/errors.proto lists the pairs).
///
/// Invariant: each code states its status where it is declared (the initializer requires it), and
/// the RPC layer derives the wire status from it alone, so a new code cannot be left unmapped.
public struct ErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The wire name, e.g. `"ERR_BANNED_GROUPMEMBER"`.
    public let name: String
    /// The canonical status a call failing with this code returns.
    public let status: CanonicalStatus

    init(_ name: String, status: CanonicalStatus) {
        self.name = name
        self.status = status
    }

    /// The gRPC canonical status code (0–16) a call failing with this code returns.
    public var grpcStatus: Int { status.rawValue }

    public var description: String { name }

    public static func == (lhs: ErrorCode, rhs: ErrorCode) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    public static let groupNotFound = ErrorCode("ERR_GROUP_NOT_FOUND", status: .notFound)
    public static let uidNotFound = ErrorCode("ERR_UID_NOT_FOUND", status: .notFound)
    public static let groupNotJoined = ErrorCode("ERR_GROUP_NOT_JOINED", status: .permissionDenied)
    public static let notAMember = ErrorCode("ERR_NOT_A_MEMBER", status: .failedPrecondition)
    public static let permissionDenied = ErrorCode("ERR_PERMISSION_DENIED", status: .permissionDenied)
    public static let cannotKickOwner = ErrorCode("ERR_CANNOT_KICK_OWNER", status: .permissionDenied)
    public static let cannotBanOwner = ErrorCode("ERR_CANNOT_BAN_OWNER", status: .permissionDenied)
    public static let userNotBanned = ErrorCode("ERR_USER_NOT_BANNED", status: .failedPrecondition)
    public static let cannotChangeOwnerScope = ErrorCode("ERR_CANNOT_CHANGE_OWNER_SCOPE", status: .permissionDenied)
    public static let alreadyJoined = ErrorCode("ERR_ALREADY_JOINED", status: .alreadyExists)
    public static let alreadyBanned = ErrorCode("ERR_ALREADY_BANNED", status: .alreadyExists)
    public static let bannedGroupMember = ErrorCode("ERR_BANNED_GROUPMEMBER", status: .permissionDenied)
    public static let groupJoinNotAllowed = ErrorCode("ERR_GROUP_JOIN_NOT_ALLOWED", status: .permissionDenied)
    public static let wrongGroupPass = ErrorCode("ERR_WRONG_GROUP_PASS", status: .permissionDenied)
    public static let emptyGroupPass = ErrorCode("ERR_EMPTY_GROUP_PASS", status: .invalidArgument)
    public static let ownerCannotLeave = ErrorCode("ERR_OWNER_CANNOT_LEAVE", status: .failedPrecondition)
    public static let sameScope = ErrorCode("ERR_SAME_SCOPE", status: .failedPrecondition)
    public static let groupNoSelfAction = ErrorCode("ERR_GROUP_NO_SELF_ACTION", status: .failedPrecondition)
    public static let guidAlreadyExists = ErrorCode("ERR_GUID_ALREADY_EXISTS", status: .alreadyExists)
    public static let uidAlreadyExists = ErrorCode("ERR_UID_ALREADY_EXISTS", status: .alreadyExists)
    public static let invalidArgument = ErrorCode("ERR_INVALID_ARGUMENT", status: .invalidArgument)
    public static let versionConflict = ErrorCode("ERR_VERSION_CONFLICT", status: .aborted)
    public static let cursorExpired = ErrorCode("ERR_CURSOR_EXPIRED", status: .outOfRange)
    public static let unauthenticated = ErrorCode("ERR_UNAUTHENTICATED", status: .unauthenticated)
    public static let rateLimited = ErrorCode("ERR_RATE_LIMITED", status: .resourceExhausted)
    public static let `internal` = ErrorCode("ERR_INTERNAL", status: .internal)
    public static let tooManySubscriptions = ErrorCode("ERR_TOO_MANY_SUBSCRIPTIONS", status: .resourceExhausted)
    /// The store cannot be reached (PostgreSQL down, the connection lost): nothing of the call
    /// was kept, or — for a commit cut off midway — its outcome is unknown. Retry later.
    public static let storeUnavailable = ErrorCode("ERR_STORE_UNAVAILABLE", status: .unavailable)
    public static let cannotMuteOwner = ErrorCode("ERR_CANNOT_MUTE_OWNER", status: .permissionDenied)
    public static let alreadyMuted = ErrorCode("ERR_ALREADY_MUTED", status: .alreadyExists)
    public static let userNotMuted = ErrorCode("ERR_USER_NOT_MUTED", status: .failedPrecondition)
    /// A `CheckPost` answer, not a failed call: the member is muted (with its `muted_until`).
    public static let memberMuted = ErrorCode("ERR_MEMBER_MUTED", status: .permissionDenied)
    public static let alreadyFrozen = ErrorCode("ERR_ALREADY_FROZEN", status: .failedPrecondition)
    public static let groupNotFrozen = ErrorCode("ERR_GROUP_NOT_FROZEN", status: .failedPrecondition)
    /// A `CheckPost` answer, not a failed call: the group is frozen and the user is a participant.
    public static let groupFrozen = ErrorCode("ERR_GROUP_FROZEN", status: .failedPrecondition)
    public static let userOwnsGroups = ErrorCode("ERR_USER_OWNS_GROUPS", status: .failedPrecondition)
    public static let inviteNotFound = ErrorCode("ERR_INVITE_NOT_FOUND", status: .notFound)
    public static let joinRequestsDisabled = ErrorCode("ERR_JOIN_REQUESTS_DISABLED", status: .failedPrecondition)
    public static let alreadyRequested = ErrorCode("ERR_ALREADY_REQUESTED", status: .alreadyExists)
    public static let joinRequestNotFound = ErrorCode("ERR_JOIN_REQUEST_NOT_FOUND", status: .notFound)
    public static let alreadyReported = ErrorCode("ERR_ALREADY_REPORTED", status: .alreadyExists)
    public static let reportAlreadyResolved = ErrorCode("ERR_REPORT_ALREADY_RESOLVED", status: .failedPrecondition)
    /// Every call on behalf of a user banned from the app fails with it (but DeleteUser of
    /// themselves); also a `CheckPost` answer, for every group.
    public static let userBannedFromApp = ErrorCode("ERR_USER_BANNED_FROM_APP", status: .permissionDenied)
    /// A blocking content rule matched the post's text: a `CheckPost` answer, never a failed call.
    public static let contentBlocked = ErrorCode("ERR_CONTENT_BLOCKED", status: .permissionDenied)
    public static let contentRuleNotFound = ErrorCode("ERR_CONTENT_RULE_NOT_FOUND", status: .notFound)
    public static let webhookNotFound = ErrorCode("ERR_WEBHOOK_NOT_FOUND", status: .notFound)

    /// The 46 codes of the service, in the order of `errors.proto`.
    public static let allCases: [ErrorCode] = [
        .groupNotFound, .uidNotFound, .groupNotJoined, .notAMember, .permissionDenied, .cannotKickOwner,
        .cannotBanOwner, .userNotBanned, .cannotChangeOwnerScope, .alreadyJoined, .alreadyBanned,
        .bannedGroupMember, .groupJoinNotAllowed, .wrongGroupPass, .emptyGroupPass, .ownerCannotLeave,
        .sameScope, .groupNoSelfAction, .guidAlreadyExists, .uidAlreadyExists, .invalidArgument,
        .versionConflict, .cursorExpired, .unauthenticated, .rateLimited, .internal, .tooManySubscriptions,
        .storeUnavailable, .cannotMuteOwner, .alreadyMuted, .userNotMuted, .memberMuted, .alreadyFrozen,
        .groupNotFrozen, .groupFrozen, .userOwnsGroups, .inviteNotFound,
        .joinRequestsDisabled, .alreadyRequested, .joinRequestNotFound, .alreadyReported, .reportAlreadyResolved,
        .userBannedFromApp, .contentBlocked, .contentRuleNotFound, .webhookNotFound,
    ]

    /// True for the codes of a failure of the storage itself (`ERR_INTERNAL`,
    /// `ERR_STORE_UNAVAILABLE`), as opposed to a rule refusing the call: such a failure is never
    /// recorded as a call's outcome (an idempotent reply, one user's result of a bulk call).
    public var isStoreFailure: Bool { self == .internal || self == .storeUnavailable }

    /// Never leaves the service: a join whose password was verified against a hash that changed
    /// before the write ran; the service verifies again and retries.
    static let passwordChanged = ErrorCode("ERR_PASSWORD_CHANGED_RETRY", status: .aborted)
}
