internal import Synchronization

/// The service's commit listeners: called once per committed batch with its actions.
///
/// Held apart from the service so the store's commit handler does not keep the service alive.
final class CommitListeners: Sendable {
    private let listeners = Mutex<[@Sendable ([ActionRecord]) -> Void]>([])

    func add(_ listener: @escaping @Sendable ([ActionRecord]) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    func deliver(_ actions: [ActionRecord]) {
        let current = listeners.withLock { $0 }
        for listener in current { listener(actions) }
    }
}
