/// A machine-readable error code of the moderation service, such as `ERR_GROUP_NOT_FOUND`.
///
/// A struct rather than an enum (as grpc-swift-2's `RPCError.Code`) so codes can be added without
/// breaking callers that switch over them. `name` is what travels in `Status.error_code`;
/// `grpcStatus` is the gRPC canonical status code the RPC layer sends with it
/// (proto/moderation/v1/errors.proto lists the pairs).
public struct ErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The wire name, e.g. `"ERR_BANNED_GROUPMEMBER"`.
    public let name: String
    /// The gRPC canonical status code (0–16) a call failing with this code returns.
    public let grpcStatus: Int

    init(_ name: String, grpcStatus: Int) {
        self.name = name
        self.grpcStatus = grpcStatus
    }

    public var description: String { name }

    public static func == (lhs: ErrorCode, rhs: ErrorCode) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    // gRPC canonical codes used below.
    private static let invalidArgumentStatus = 3, notFoundStatus = 5, alreadyExistsStatus = 6
    private static let permissionDeniedStatus = 7, resourceExhaustedStatus = 8
    private static let failedPreconditionStatus = 9, abortedStatus = 10, outOfRangeStatus = 11
    private static let internalStatus = 13, unauthenticatedStatus = 16

    public static let groupNotFound = ErrorCode("ERR_GROUP_NOT_FOUND", grpcStatus: notFoundStatus)
    public static let uidNotFound = ErrorCode("ERR_UID_NOT_FOUND", grpcStatus: notFoundStatus)
    public static let groupNotJoined = ErrorCode("ERR_GROUP_NOT_JOINED", grpcStatus: permissionDeniedStatus)
    public static let notAMember = ErrorCode("ERR_NOT_A_MEMBER", grpcStatus: failedPreconditionStatus)
    public static let permissionDenied = ErrorCode("ERR_PERMISSION_DENIED", grpcStatus: permissionDeniedStatus)
    public static let cannotKickOwner = ErrorCode("ERR_CANNOT_KICK_OWNER", grpcStatus: permissionDeniedStatus)
    public static let cannotBanOwner = ErrorCode("ERR_CANNOT_BAN_OWNER", grpcStatus: permissionDeniedStatus)
    public static let userNotBanned = ErrorCode("ERR_USER_NOT_BANNED", grpcStatus: failedPreconditionStatus)
    public static let cannotChangeOwnerScope = ErrorCode("ERR_CANNOT_CHANGE_OWNER_SCOPE", grpcStatus: permissionDeniedStatus)
    public static let alreadyJoined = ErrorCode("ERR_ALREADY_JOINED", grpcStatus: alreadyExistsStatus)
    public static let alreadyBanned = ErrorCode("ERR_ALREADY_BANNED", grpcStatus: alreadyExistsStatus)
    public static let bannedGroupMember = ErrorCode("ERR_BANNED_GROUPMEMBER", grpcStatus: permissionDeniedStatus)
    public static let groupJoinNotAllowed = ErrorCode("ERR_GROUP_JOIN_NOT_ALLOWED", grpcStatus: permissionDeniedStatus)
    public static let wrongGroupPass = ErrorCode("ERR_WRONG_GROUP_PASS", grpcStatus: permissionDeniedStatus)
    public static let emptyGroupPass = ErrorCode("ERR_EMPTY_GROUP_PASS", grpcStatus: invalidArgumentStatus)
    public static let ownerCannotLeave = ErrorCode("ERR_OWNER_CANNOT_LEAVE", grpcStatus: failedPreconditionStatus)
    public static let sameScope = ErrorCode("ERR_SAME_SCOPE", grpcStatus: failedPreconditionStatus)
    public static let groupNoSelfAction = ErrorCode("ERR_GROUP_NO_SELF_ACTION", grpcStatus: failedPreconditionStatus)
    public static let guidAlreadyExists = ErrorCode("ERR_GUID_ALREADY_EXISTS", grpcStatus: alreadyExistsStatus)
    public static let uidAlreadyExists = ErrorCode("ERR_UID_ALREADY_EXISTS", grpcStatus: alreadyExistsStatus)
    public static let invalidArgument = ErrorCode("ERR_INVALID_ARGUMENT", grpcStatus: invalidArgumentStatus)
    public static let versionConflict = ErrorCode("ERR_VERSION_CONFLICT", grpcStatus: abortedStatus)
    public static let cursorExpired = ErrorCode("ERR_CURSOR_EXPIRED", grpcStatus: outOfRangeStatus)
    public static let unauthenticated = ErrorCode("ERR_UNAUTHENTICATED", grpcStatus: unauthenticatedStatus)
    public static let rateLimited = ErrorCode("ERR_RATE_LIMITED", grpcStatus: resourceExhaustedStatus)
    public static let `internal` = ErrorCode("ERR_INTERNAL", grpcStatus: internalStatus)

    /// The 26 codes of the service, in the order of `errors.proto`.
    public static let allCases: [ErrorCode] = [
        .groupNotFound, .uidNotFound, .groupNotJoined, .notAMember, .permissionDenied, .cannotKickOwner,
        .cannotBanOwner, .userNotBanned, .cannotChangeOwnerScope, .alreadyJoined, .alreadyBanned,
        .bannedGroupMember, .groupJoinNotAllowed, .wrongGroupPass, .emptyGroupPass, .ownerCannotLeave,
        .sameScope, .groupNoSelfAction, .guidAlreadyExists, .uidAlreadyExists, .invalidArgument,
        .versionConflict, .cursorExpired, .unauthenticated, .rateLimited, .internal,
    ]

    /// Never leaves the service: a join whose password was verified against a hash that changed
    /// before the write ran; the service verifies again and retries.
    static let passwordChanged = ErrorCode("ERR_PASSWORD_CHANGED_RETRY", grpcStatus: abortedStatus)
}
