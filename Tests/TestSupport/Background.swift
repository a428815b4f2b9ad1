import ThreadSupport

/// Work running on its own thread while the test goes on (a blocking shutdown, a blocking
/// connect), with a bounded wait for its result.
public final class Background<Value: Sendable>: Sendable {
    /// Where the thread leaves its result.
    private let slot = ConditionLock<Value?>(nil)

    /// Starts `body` on a new, detached thread.
    public init(_ body: @escaping @Sendable () -> Value) {
        let slot = slot
        WorkerThread.detached(name: "test-background") {
            let value = body()
            slot.withLock { $0 = value }
            slot.broadcast()
        }
    }

    /// True once the work has finished.
    public var isFinished: Bool { slot.withLock { $0 != nil } }

    /// The work's result, waiting up to `timeoutMs`.
    /// - Throws: `TestFailure` when it has not finished by then.
    public func wait(timeoutMs: Int = 10_000) throws -> Value {
        let value = slot.withLock(when: { $0 != nil }, timeout: .milliseconds(timeoutMs)) { $0 }
        guard let value, let value else { throw TestFailure("background work still running after \(timeoutMs) ms") }
        return value
    }

    /// Runs `body(index)` on `count` threads at once and returns their results in index order.
    public static func all(_ count: Int, timeoutMs: Int = 30_000, _ body: @escaping @Sendable (Int) -> Value) throws
        -> [Value]
    {
        let threads = (0..<count).map { index in Background { body(index) } }
        return try threads.map { try $0.wait(timeoutMs: timeoutMs) }
    }
}
