internal import Synchronization

/// The service's commit listeners: called once per committed batch with its actions, and asked
/// which apps they follow (the store's `CommitHandler`).
///
/// Held apart from the service so the store's commit handler does not keep the service alive.
final class CommitListeners: Sendable {
    private struct Listener: Sendable {
        let follows: @Sendable (String) -> Bool
        let followedApps: (@Sendable () -> Set<String>)?
        let deliver: @Sendable ([ActionRecord]) -> Void
    }

    private let listeners = Mutex<[Listener]>([])

    func add(
        follows: @escaping @Sendable (String) -> Bool, followedApps: (@Sendable () -> Set<String>)?,
        _ deliver: @escaping @Sendable ([ActionRecord]) -> Void
    ) {
        listeners.withLock { $0.append(Listener(follows: follows, followedApps: followedApps, deliver: deliver)) }
    }

    func deliver(_ actions: [ActionRecord]) {
        let current = listeners.withLock { $0 }
        for listener in current { listener.deliver(actions) }
    }

    /// True when any listener follows `app`.
    func follows(_ app: String) -> Bool {
        listeners.withLock { $0 }.contains { $0.follows(app) }
    }

    /// The apps some listener follows; nil when a listener cannot list its own.
    func followedApps() -> Set<String>? {
        var apps = Set<String>()
        for listener in listeners.withLock({ $0 }) {
            guard let list = listener.followedApps else { return nil }
            apps.formUnion(list())
        }
        return apps
    }
}
