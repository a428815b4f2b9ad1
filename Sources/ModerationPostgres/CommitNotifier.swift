/// How the instances of one schema tell each other about commits: a `NOTIFY` on a channel of the
/// schema, with the committing instance, the app and its new head seq as payload.
///
/// A notification is only a wake-up: the watcher that receives it reads the actions from the log
/// by seq (`CommitFeed.catchUp`), so one lost costs a poll period, never an event.
struct CommitNotifier: Sendable, Equatable {
    /// The channel: `moderation_commits_<schema>`, or with a hash of the schema when that would
    /// pass PostgreSQL's 63-byte limit on names. Each schema has its own, so stores of several
    /// schemas in one database (the tests) do not wake one another.
    let channel: String
    /// This store's tag in its payloads, so its watcher skips its own commits (the completer
    /// hands those over already).
    let instance: String

    init(schema: String, instance: String) {
        let prefix = "moderation_commits_"
        if prefix.utf8.count + schema.utf8.count <= 63 {
            channel = prefix + schema
        } else {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in schema.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            channel = prefix + String(hash, radix: 16)
        }
        self.instance = instance
    }

    /// `instance:head:app` (the app last: its name may hold a colon).
    func payload(app: String, head: UInt64) -> String {
        "\(instance):\(head):\(app)"
    }

    /// The app and head seq of another instance's notification; nil for this instance's own and
    /// for a payload not in this form.
    func parse(_ payload: String) -> (app: String, head: UInt64)? {
        let parts = payload.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] != instance, let head = UInt64(parts[1]) else { return nil }
        return (String(parts[2]), head)
    }
}
