public import Moderation

/// What a subscription follows.
public enum SubscriptionTarget: Sendable, Equatable {
    /// The actions a user sees: in groups they belong to at the time of the action, those whose
    /// target they are, and their own.
    case user(String)
    /// Every action of these groups.
    case groups(Set<String>)
    /// Every action of the app.
    case app
}

/// A subscription as asked for: by whom, to what, which kinds, from where.
public struct SubscriptionRequest: Sendable {
    public var caller: Caller
    /// nil: the acting user (the caller must then name one).
    public var target: SubscriptionTarget?
    /// Only these kinds; empty means all.
    public var kinds: Set<ActionKind>
    /// nil: live from now. Set: replay every matching action after this seq first.
    public var afterSeq: UInt64?

    public init(caller: Caller, target: SubscriptionTarget?, kinds: Set<ActionKind> = [], afterSeq: UInt64? = nil) {
        self.caller = caller
        self.target = target
        self.kinds = kinds
        self.afterSeq = afterSeq
    }
}
