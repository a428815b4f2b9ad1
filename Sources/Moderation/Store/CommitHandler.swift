/// What a store reports committed actions to.
///
/// A struct rather than a bare closure so stores can keep it in a `Mutex`: a closure stored
/// directly as a generic Mutex's value is re-wrapped in two reabstraction thunks by every
/// `withLock` (its inout write-back), so reading it once per round grew a chain of thunks without
/// end — every call went through all of them, and releasing them at shutdown overflowed the stack.
public struct CommitHandler: Sendable {
    /// Called once per committed batch with its actions, per app in seq order.
    public let deliver: @Sendable ([ActionRecord]) -> Void
    /// Whether anyone follows `app`'s actions now. A store may leave out the actions of an app
    /// nobody follows: one that must read other servers' commits from the database to deliver
    /// them spares those reads. So a new follower must be counted here before it reads the log's
    /// head, and will then be given every action after that head.
    public let follows: @Sendable (_ app: String) -> Bool
    /// The apps anyone follows now, when that can be listed; nil when not (a follower of every
    /// app). A store that polls the database for other servers' commits, beside being told of
    /// them, may poll only these apps: what it is not told of in another app is read when the
    /// app is next committed to or followed. Counted as `follows` counts.
    public let followedApps: @Sendable () -> Set<String>?

    public init(
        follows: @escaping @Sendable (_ app: String) -> Bool,
        followedApps: @escaping @Sendable () -> Set<String>? = { nil },
        deliver: @escaping @Sendable ([ActionRecord]) -> Void
    ) {
        self.follows = follows
        self.followedApps = followedApps
        self.deliver = deliver
    }
}
