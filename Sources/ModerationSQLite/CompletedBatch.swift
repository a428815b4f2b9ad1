internal import Moderation

/// A batch whose outcome is final, on its way to the completer.
struct CompletedBatch: Sendable {
    let writes: [any StoreWrite]
    let failures: [ModerationError?]
    /// The actions the batch committed, in seq order.
    let actions: [ActionRecord]

    /// Calls the commit handler with the actions, then every write's `finish`.
    func report(to handler: (@Sendable ([ActionRecord]) -> Void)?) {
        if !actions.isEmpty, let handler { handler(actions) }
        for index in writes.indices { writes[index].finish(failures[index]) }
    }

    /// The WAL could not be flushed: nobody may be told their write is durable. Every write
    /// fails with `.internal` (it may or may not survive a crash).
    func reportLost() {
        let lost = ModerationError.storage("flushing the write-ahead log failed; the outcome is unknown")
        for index in writes.indices { writes[index].finish(failures[index] ?? lost) }
    }
}
