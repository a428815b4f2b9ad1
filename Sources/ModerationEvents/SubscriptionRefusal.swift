public import Moderation

/// Why the hub did not start a subscription (nothing was sent then).
public enum SubscriptionRefusal: Error, Sendable, Equatable {
    /// Not allowed, over its app's cap (`ERR_TOO_MANY_SUBSCRIPTIONS`), or its cursor has expired:
    /// the domain's error, for the client.
    case rejected(ModerationError)
    /// The server's memory budget has no room for another subscription: the server's condition,
    /// not the client's; the RPC layer answers RESOURCE_EXHAUSTED / `ERR_OVERLOADED`.
    case overloaded(String)
}
