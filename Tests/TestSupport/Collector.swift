import Synchronization

/// Values arriving on other threads (completions, stream messages), collected in arrival order.
public final class Collector<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    public init() {}

    public func append(_ value: Value) { values.withLock { $0.append(value) } }

    public var items: [Value] { values.withLock { $0 } }

    public var count: Int { values.withLock { $0.count } }

    /// Waits until at least `count` values have arrived.
    public func waitForCount(_ count: Int, timeoutMs: Int = 5_000) -> Bool {
        waitUntil(timeoutMs: timeoutMs, pollMs: 2) { self.count >= count }
    }
}
