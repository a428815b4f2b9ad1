public import Moderation
public import ModerationEvents
public import RPCCore

extension RPCError {
    /// The wire error of a domain error: its `ERR_…` code, message and details, with the
    /// canonical status the code states (the pairs are in proto/moderation/v1/errors.proto).
    /// The domain error is kept as the cause.
    public init(_ error: ModerationError) {
        self.init(
            code: StatusCode(error.code.status), errorCode: error.code.name, message: error.message,
            details: error.details,
            cause: error)
    }
}

extension RPCError {
    /// The wire error of a subscription the event hub refused: the domain's error, or
    /// RESOURCE_EXHAUSTED / `ERR_OVERLOADED` when the server's memory budget had no room for it.
    public init(_ refusal: SubscriptionRefusal) {
        switch refusal {
        case .rejected(let error):
            self.init(error)
        case .overloaded(let message):
            self.init(.overloaded, message)
        }
    }
}

extension StatusCode {
    /// The wire code of a domain status. Both count in the canonical numbering, so the conversion
    /// is total: no table to keep in step and no `default` for a status to fall into.
    init(_ status: CanonicalStatus) {
        self.init(rawValue: UInt32(status.rawValue))
    }
}
