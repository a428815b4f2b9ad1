public import Moderation
public import RPCCore

extension RPCError {
    /// The wire error of a domain error: its `ERR_…` code, message, and the canonical status the
    /// code goes with (the table is in proto/moderation/v1/errors.proto).
    public init(_ error: ModerationError) {
        self.init(code: Self.status(of: error.code), errorCode: error.code.name, message: error.message, details: error.details)
    }

    static func status(of code: ErrorCode) -> StatusCode {
        switch code {
        case .groupNotFound, .uidNotFound:
            return .notFound
        case .groupNotJoined, .permissionDenied, .cannotKickOwner, .cannotBanOwner, .cannotChangeOwnerScope,
             .bannedGroupMember, .groupJoinNotAllowed, .wrongGroupPass:
            return .permissionDenied
        case .notAMember, .userNotBanned, .ownerCannotLeave, .sameScope, .groupNoSelfAction:
            return .failedPrecondition
        case .alreadyJoined, .alreadyBanned, .guidAlreadyExists, .uidAlreadyExists:
            return .alreadyExists
        case .invalidArgument, .emptyGroupPass:
            return .invalidArgument
        case .versionConflict:
            return .aborted
        case .cursorExpired:
            return .outOfRange
        case .unauthenticated:
            return .unauthenticated
        case .rateLimited:
            return .resourceExhausted
        default:
            return .internal
        }
    }
}
