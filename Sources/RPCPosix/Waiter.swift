import ThreadSupport

/// A one-shot value a thread can wait for: how the client's blocking calls wait for the
/// completion the reader thread runs.
final class Waiter<Value: Sendable>: Sendable {
    private let value = ConditionLock<Value?>(nil)

    /// Runs `start` with a completion that resolves a new waiter, then waits for that value.
    static func wait(for start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value {
        let waiter = Waiter()
        start { waiter.resolve($0) }
        return waiter.wait()
    }

    /// Sets the value (only the first one counts) and wakes the waiting thread.
    func resolve(_ value: Value) {
        self.value.withLock { if $0 == nil { $0 = value } }
        self.value.broadcast()
    }

    func wait() -> Value {
        value.withLock(when: { $0 != nil }) { $0! }
    }
}
