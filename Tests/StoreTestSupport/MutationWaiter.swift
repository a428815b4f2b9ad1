public import Moderation
internal import Synchronization
import ThreadSupport

/// Blocks until a mutation's completion has been called and returns what it was given.
public enum MutationWaiter {
    public static func wait<T: Sendable>(_ start: (@escaping @Sendable (MutationResult<T>) -> Void) -> Void)
        -> MutationResult<T>
    {
        let box = ResultBox<T>()
        start { result in box.set(result) }
        return box.get()
    }

    /// Blocks until a store task's completion (a plain `Result`: webhook delivery's writes) has
    /// been called and returns what it was given.
    public static func waitForResult<T: Sendable>(
        _ start: (@escaping @Sendable (Result<T, ModerationError>) -> Void) -> Void
    ) -> Result<T, ModerationError> {
        let box = ResultBox<T>()
        start { result in box.set(.done(result)) }
        switch box.get() {
        case .done(let result, _): return result
        case .replayed: return .failure(ModerationError(.internal, "unexpected replay"))
        }
    }

    /// The bytes tests store under idempotency keys: the result's description, so equal results
    /// give equal bytes.
    public static func describe<T>(_ result: Result<T, ModerationError>) -> [UInt8] {
        Array(String(describing: result).utf8)
    }

    private final class ResultBox<T: Sendable>: Sendable {
        private let value = Mutex<MutationResult<T>?>(nil)
        private let done = BlockingSemaphore()

        func set(_ result: MutationResult<T>) {
            value.withLock { $0 = result }
            done.signal()
        }

        func get() -> MutationResult<T> {
            done.wait()
            return value.withLock { $0! }
        }
    }
}

extension MutationResult {
    /// The result of a mutation that ran (not replayed); a replay is a test failure.
    public func get() throws(ModerationError) -> T {
        switch self {
        case .done(let result, _): return try result.get()
        case .replayed: throw ModerationError(.internal, "unexpected replay")
        }
    }
}
