internal import Synchronization

/// The service's commit listeners: called once per committed batch with its actions, and asked
/// which apps they follow (the store's `CommitHandler`).
///
/// Held apart from the service so the store's commit handler does not keep the service alive.
final class CommitListeners: Sendable {
    private struct Listener: Sendable {
        let follows: @Sendable (String) -> Bool
        let deliver: @Sendable ([ActionRecord]) -> Void
    }

    private let listeners = Mutex<[Listener]>([])

    func add(follows: @escaping @Sendable (String) -> Bool, _ deliver: @escaping @Sendable ([ActionRecord]) -> Void) {
        listeners.withLock { $0.append(Listener(follows: follows, deliver: deliver)) }
    }

    func deliver(_ actions: [ActionRecord]) {
        let current = listeners.withLock { $0 }
        for listener in current { listener.deliver(actions) }
    }

    /// True when any listener follows `app`.
    func follows(_ app: String) -> Bool {
        listeners.withLock { $0 }.contains { $0.follows(app) }
    }
}
