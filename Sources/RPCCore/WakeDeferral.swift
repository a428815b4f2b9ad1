internal import ThreadSupport

/// Something other threads hand work to and then wake: an event loop.
public protocol Wakeable: AnyObject, Sendable {
    /// Wakes it to take the work handed to it.
    func wake()
}

/// Holds back the wake-ups of event loops while one thread hands work to many of them, and wakes
/// each once at the end.
///
/// The event hub's dispatcher hands one committed batch to thousands of subscribers' connections
/// spread over the loops. Woken at the first frame, a loop (on a machine with fewer cores than
/// threads, often the very core the dispatcher runs on) would take the few frames there are,
/// write them, sleep, and be woken again for the next few: many turns and many small writes
/// where one turn with every frame, and one write per connection, serves. Inside `batch`, a loop
/// that would wake is remembered instead, and woken when the batch ends.
public enum WakeDeferral {
    private final class State {
        var depth = 0
        var held: [any Wakeable] = []
        var heldIDs: Set<ObjectIdentifier> = []
    }

    private static let state = ThreadLocal { State() }

    /// Runs `body` with this thread's wake-ups held back; then wakes, once each, the loops that
    /// would have been woken. Batches nest: the outermost one wakes.
    public static func batch<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let current = state.value
        current.depth += 1
        defer {
            current.depth -= 1
            if current.depth == 0, !current.held.isEmpty {
                let held = current.held
                current.held.removeAll(keepingCapacity: true)
                current.heldIDs.removeAll(keepingCapacity: true)
                for target in held { target.wake() }
            }
        }
        return try body()
    }

    /// For a loop about to wake itself: true when the calling thread is inside `batch`, which then
    /// wakes it when it ends; false when it should wake now.
    public static func holdBack(_ target: any Wakeable) -> Bool {
        let current = state.value
        guard current.depth > 0 else { return false }
        if current.heldIDs.insert(ObjectIdentifier(target)).inserted { current.held.append(target) }
        return true
    }
}
