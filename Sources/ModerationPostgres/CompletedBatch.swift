internal import Moderation

/// A batch whose outcome is final, on its way to the completer.
struct CompletedBatch: Sendable {
    let writes: [any StoreWrite]
    let failures: [ModerationError?]
    /// The actions the batch committed, in seq order per app.
    let actions: [ActionRecord]

    /// Calls every write's `finish` with its outcome.
    func finish() {
        for index in writes.indices { writes[index].finish(failures[index]) }
    }
}
