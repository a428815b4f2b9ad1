/// The class of failure an `ErrorCode` belongs to, in the canonical status codes of
/// `google.rpc.Code` (the numbering gRPC uses): the domain's half of the wire mapping.
///
/// Transport-neutral (the domain imports no RPC module), and an enum with the canonical numbers as
/// raw values: every case must state its number, so the RPC layer converts a status without a
/// table of its own and without a `default` that could swallow a new one. Only the classes the
/// service's codes use are listed; a new code needing another one adds the case with its number.
public enum CanonicalStatus: Int, Sendable, CaseIterable {
    case invalidArgument = 3
    case notFound = 5
    case alreadyExists = 6
    case permissionDenied = 7
    case resourceExhausted = 8
    case failedPrecondition = 9
    case aborted = 10
    case outOfRange = 11
    case `internal` = 13
    case unavailable = 14
    case unauthenticated = 16
}
