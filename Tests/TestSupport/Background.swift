internal import Glibc
import Synchronization

/// Work running on its own thread while the test goes on (a blocking shutdown, a blocking
/// connect), with a bounded wait for its result.
public final class Background<Value: Sendable>: Sendable {
    private let slot = Slot()

    /// Where the thread leaves its result (a class, so the thread's closure can hold it).
    private final class Slot: Sendable {
        let value = Mutex<Value?>(nil)
    }

    /// Starts `body` on a new, detached thread.
    public init(_ body: @escaping @Sendable () -> Value) {
        let box = ThreadBody { [slot] in
            let value = body()
            slot.value.withLock { $0 = value }
        }
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, Unmanaged.passRetained(box).toOpaque())
        precondition(status == 0, "pthread_create failed with \(status)")
        pthread_detach(thread)
    }

    /// True once the work has finished.
    public var isFinished: Bool { slot.value.withLock { $0 != nil } }

    /// The work's result, waiting up to `timeoutMs`.
    /// - Throws: `TestFailure` when it has not finished by then.
    public func wait(timeoutMs: Int = 10_000) throws -> Value {
        var value: Value?
        waitUntil(timeoutMs: timeoutMs, pollMs: 2) {
            value = slot.value.withLock { $0 }
            return value != nil
        }
        guard let value else { throw TestFailure("background work still running after \(timeoutMs) ms") }
        return value
    }

    /// Runs `body(index)` on `count` threads at once and returns their results in index order.
    public static func all(_ count: Int, timeoutMs: Int = 30_000, _ body: @escaping @Sendable (Int) -> Value) throws -> [Value] {
        let threads = (0..<count).map { index in Background { body(index) } }
        return try threads.map { try $0.wait(timeoutMs: timeoutMs) }
    }
}

/// A closure passed to a new thread through `Unmanaged` (a C entry point cannot capture).
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
