import Synchronization
import ThreadSupport

/// The rule set scans use now, and the thread that compiles the next one.
///
/// `update` hands a new rule list to the compile thread and returns at once; scans keep reading
/// `ruleSet`, the previous set, until the new one is compiled and swapped in (one pointer swap
/// under a mutex). Updates that arrive while a compile runs are coalesced: only the latest list
/// compiles next. A scan that took the old set keeps it alive until it ends.
public final class RuleSetHolder: Sendable {
    /// What the caller and the compile thread share.
    private struct Requests: Sendable {
        /// The latest list not yet compiled, with its version.
        var pending: (version: UInt64, rules: [ContentRule])?
        /// The version of the last `update`.
        var requested: UInt64 = 0
        /// The version of the last list compiled (or refused as a whole).
        var completed: UInt64 = 0
        /// Why the last list refused as a whole did not compile (nil after a success).
        var failure: ContentRuleSetError?
        var closed = false
    }

    /// The state the compile thread holds too (not the holder itself, so that the holder's
    /// `deinit` can stop the thread).
    private final class Shared: Sendable {
        let current = Mutex(CompiledRuleSet())
        let requests = ConditionLock(Requests())
    }

    private let shared = Shared()
    private let thread: Mutex<WorkerThread?>
    private var requests: ConditionLock<Requests> { shared.requests }

    /// Starts the compile thread (named `name`), with the empty set in place.
    public init(name: String = "content-compile") {
        let shared = self.shared
        self.thread = Mutex(WorkerThread(name: name) { Self.compileLoop(shared) })
    }

    deinit {
        close()
    }

    /// The set to scan with now.
    public var ruleSet: CompiledRuleSet {
        shared.current.withLock { $0 }
    }

    /// Why the last rule list that finished compiling did not compile as a whole, if it did not
    /// (the previous set then stays in place).
    public var lastFailure: ContentRuleSetError? {
        requests.withLock { $0.failure }
    }

    /// Asks for `rules` to be compiled and swapped in; returns at once.
    /// - Returns: the version of this list, for `waitForVersion`.
    @discardableResult
    public func update(_ rules: [ContentRule]) -> UInt64 {
        let version = requests.withLock { state in
            state.requested += 1
            state.pending = (state.requested, rules)
            return state.requested
        }
        requests.broadcast()
        return version
    }

    /// Waits until the list of `version` (or a later one) has been compiled and swapped in.
    /// - Returns: the set in place then, or nil when `timeout` passed first or the holder closed.
    public func waitForVersion(_ version: UInt64, timeout: Duration) -> CompiledRuleSet? {
        let done = requests.withLock(when: { $0.completed >= version || $0.closed }, timeout: timeout) {
            $0.completed >= version
        }
        return done == true ? ruleSet : nil
    }

    /// Stops the compile thread (after the compile under way, if any) and waits for it.
    public func close() {
        requests.withLock { $0.closed = true }
        requests.broadcast()
        let worker = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        worker?.join()
    }

    private static func compileLoop(_ shared: Shared) {
        let requests = shared.requests
        while true {
            let next = requests.withLock(when: { $0.pending != nil || $0.closed }) { state in
                defer { state.pending = nil }
                return state.closed ? nil : state.pending
            }
            guard let (version, rules) = next else { return }
            let failure: ContentRuleSetError?
            do throws(ContentRuleSetError) {
                let compiled = try CompiledRuleSet.compile(rules)
                let previous = shared.current.withLock { set in
                    defer { set = compiled }
                    return set
                }
                // The previous set is released here, outside the lock, unless scans still hold it.
                _ = previous
                failure = nil
            } catch {
                failure = error
            }
            requests.withLock { state in
                state.completed = version
                state.failure = failure
            }
            requests.broadcast()
        }
    }
}
