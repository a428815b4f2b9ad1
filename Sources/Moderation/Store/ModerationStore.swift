/// Durable storage of the moderation data, as the domain needs it.
///
/// Reads run on the calling thread in a snapshot of their own and never wait for writes. Writes
/// are queued with `submit` and run on the store's writer, which may commit many of them in one
/// transaction (group commit) but keeps each atomic on its own. A store calls its commit handler
/// once per committed batch, with the actions appended in it in seq order, before calling the
/// batch's `finish` methods.
public protocol ModerationStore: AnyObject, Sendable {
    /// Runs `body` with a consistent snapshot of the committed data.
    func read<T>(_ body: (any StoreSnapshot) throws(ModerationError) -> T) throws(ModerationError) -> T

    /// `read` for a call that arrived at `instant` (`CLOCK_MONOTONIC` nanoseconds; nil: now): the
    /// snapshot must show every write acknowledged before that instant, and may show any state
    /// committed since. A store that answers from a copy of its data checks the copy against
    /// the database no earlier than `instant`; the default is `read`, which is always current.
    func read<T>(arrivedAt instant: UInt64?, _ body: (any StoreSnapshot) throws(ModerationError) -> T)
        throws(ModerationError) -> T

    /// Queues a write. After `close`, the write is finished at once with `.internal`.
    func submit(_ write: any StoreWrite)

    /// Sets what is given the actions of every committed batch (replacing any earlier one).
    func setCommitHandler(_ handler: CommitHandler)

    /// Sets what each round of reporting runs inside (replacing any earlier one): a round is the
    /// commit handler's calls and the writes' `finish`es for the batches one flush made durable.
    /// The server holds its event loops' wake-ups there, so that a round's replies reach each
    /// loop as one batch rather than one wake-up and one small write each.
    func setCompletionScope(_ scope: @escaping CompletionScope)

    /// Finishes the queued writes, stops the writer and closes the storage.
    func close()

    /// True when reads that arrive together share work if started together — one check of a
    /// cache for every read that arrived before it (`read(arrivedAt:_:)`) — so a server should
    /// start the short reads of a loop turn once it has read the turn's input. Default false.
    var readsShareChecks: Bool { get }

    /// Where the wrong-password limit keeps its count when several server processes share the
    /// store, so that they count together; nil (the default): each service counts its own, in
    /// memory.
    var passwordAttempts: (any PasswordAttemptLedger)? { get }
}

/// Runs one round of a store's reports (see `ModerationStore.setCompletionScope`).
public typealias CompletionScope = @Sendable (_ round: () -> Void) -> Void

extension ModerationStore {
    public var passwordAttempts: (any PasswordAttemptLedger)? { nil }

    public var readsShareChecks: Bool { false }

    public func read<T>(arrivedAt instant: UInt64?, _ body: (any StoreSnapshot) throws(ModerationError) -> T)
        throws(ModerationError) -> T
    {
        try read(body)
    }
}
