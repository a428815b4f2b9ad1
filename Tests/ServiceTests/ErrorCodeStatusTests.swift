import Moderation
import ModerationRPC
import RPCCore
import Testing

/// The status each domain error code goes out with, as proto/moderation/v1/errors.proto pairs
/// them: the RPC layer's conversion checked for every code without a server.
///
/// That every code has a status at all is the compiler's check (`ErrorCode` requires one, and
/// `CanonicalStatus` gives each case its number); this table checks the values.
@Suite("Error code statuses")
struct ErrorCodeStatusTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let code: ErrorCode
        let status: StatusCode

        var testDescription: String { code.name }
    }

    static let table: [Row] = [
        Row(code: .groupNotFound, status: .notFound),
        Row(code: .uidNotFound, status: .notFound),
        Row(code: .groupNotJoined, status: .permissionDenied),
        Row(code: .notAMember, status: .failedPrecondition),
        Row(code: .permissionDenied, status: .permissionDenied),
        Row(code: .cannotKickOwner, status: .permissionDenied),
        Row(code: .cannotBanOwner, status: .permissionDenied),
        Row(code: .userNotBanned, status: .failedPrecondition),
        Row(code: .cannotChangeOwnerScope, status: .permissionDenied),
        Row(code: .alreadyJoined, status: .alreadyExists),
        Row(code: .alreadyBanned, status: .alreadyExists),
        Row(code: .bannedGroupMember, status: .permissionDenied),
        Row(code: .groupJoinNotAllowed, status: .permissionDenied),
        Row(code: .wrongGroupPass, status: .permissionDenied),
        Row(code: .emptyGroupPass, status: .invalidArgument),
        Row(code: .ownerCannotLeave, status: .failedPrecondition),
        Row(code: .sameScope, status: .failedPrecondition),
        Row(code: .groupNoSelfAction, status: .failedPrecondition),
        Row(code: .guidAlreadyExists, status: .alreadyExists),
        Row(code: .uidAlreadyExists, status: .alreadyExists),
        Row(code: .invalidArgument, status: .invalidArgument),
        Row(code: .versionConflict, status: .aborted),
        Row(code: .cursorExpired, status: .outOfRange),
        Row(code: .unauthenticated, status: .unauthenticated),
        Row(code: .rateLimited, status: .resourceExhausted),
        Row(code: .internal, status: .internal),
        Row(code: .tooManySubscriptions, status: .resourceExhausted),
        Row(code: .storeUnavailable, status: .unavailable),
        Row(code: .cannotMuteOwner, status: .permissionDenied),
        Row(code: .alreadyMuted, status: .alreadyExists),
        Row(code: .userNotMuted, status: .failedPrecondition),
        Row(code: .memberMuted, status: .permissionDenied),
        Row(code: .alreadyFrozen, status: .failedPrecondition),
        Row(code: .groupNotFrozen, status: .failedPrecondition),
        Row(code: .groupFrozen, status: .failedPrecondition),
        Row(code: .userOwnsGroups, status: .failedPrecondition),
        Row(code: .inviteNotFound, status: .notFound),
        Row(code: .joinRequestsDisabled, status: .failedPrecondition),
        Row(code: .alreadyRequested, status: .alreadyExists),
        Row(code: .joinRequestNotFound, status: .notFound),
        Row(code: .alreadyReported, status: .alreadyExists),
        Row(code: .reportAlreadyResolved, status: .failedPrecondition),
        Row(code: .userBannedFromApp, status: .permissionDenied),
        Row(code: .contentBlocked, status: .permissionDenied),
        Row(code: .contentRuleNotFound, status: .notFound),
        Row(code: .webhookNotFound, status: .notFound),
    ]

    @Test("the table lists every code once")
    func coversEveryCode() {
        #expect(Self.table.map(\.code) == ErrorCode.allCases)
    }

    @Test("a domain error goes out with its code's status", arguments: table)
    func status(_ row: Row) throws {
        let domain = ModerationError(row.code, "message naming g", details: ["key": "value"])
        let wire = RPCError(domain)
        #expect(wire.code == row.status)
        #expect(wire.code.rawValue == UInt32(row.code.grpcStatus))
        #expect(wire.errorCode == row.code.name)
        #expect(wire.message == domain.message)
        #expect(wire.details == domain.details)
        let cause = try #require(wire.cause as? ModerationError)
        #expect(cause == domain)
    }

    @Test("every canonical status has the number gRPC gives its name")
    func canonicalNumbers() {
        let names: [CanonicalStatus: String] = [
            .invalidArgument: "INVALID_ARGUMENT", .notFound: "NOT_FOUND", .alreadyExists: "ALREADY_EXISTS",
            .permissionDenied: "PERMISSION_DENIED", .resourceExhausted: "RESOURCE_EXHAUSTED",
            .failedPrecondition: "FAILED_PRECONDITION", .aborted: "ABORTED", .outOfRange: "OUT_OF_RANGE",
            .internal: "INTERNAL", .unavailable: "UNAVAILABLE", .unauthenticated: "UNAUTHENTICATED",
        ]
        #expect(names.count == CanonicalStatus.allCases.count)
        for status in CanonicalStatus.allCases {
            #expect(StatusCode(name: names[status] ?? "")?.rawValue == UInt32(status.rawValue), "\(status)")
        }
    }
}
