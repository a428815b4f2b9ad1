import Synchronization

/// Where the server reads the time for its timers: handshake, idle and keepalive, the calls'
/// deadlines, drain, and every other timer of its event loops.
///
/// Injected, as swift-nio's `EmbeddedEventLoop` and grpc-swift's manual clock are, so that tests
/// of timeouts move the time themselves instead of sleeping through it. The process runs on the
/// system's monotonic clock (`SystemClock`, in the POSIX transport); tests run on a
/// `ManualClock`.
public protocol ServerClock: AnyObject, Sendable {
    /// Nanoseconds on a monotonic scale.
    var now: UInt64 { get }
    /// Asks to be told whenever the time is moved by hand, so that an event loop runs the timers
    /// that came due (a clock that moves by itself never calls: the loop's kernel timer wakes it).
    func whenAdvanced(_ listener: @escaping @Sendable () -> Void)
}

extension ServerClock {
    public func whenAdvanced(_ listener: @escaping @Sendable () -> Void) {}
}

/// A clock that moves only when a test moves it.
///
/// Event loops on it arm no kernel timer: `advance` tells each of them, and each runs the timers
/// that came due on its own thread, soon after (a test that must know they ran waits for the
/// loops, e.g. `RPCServer.waitForLoops()`).
public final class ManualClock: ServerClock {
    private let value: Atomic<UInt64>
    private let listeners = Mutex<[@Sendable () -> Void]>([])

    /// - Parameter start: the first reading, in nanoseconds (not 0, which reads as "never").
    public init(start: UInt64 = 1_000_000_000) { value = Atomic(start) }

    public var now: UInt64 { value.load(ordering: .acquiring) }

    public func whenAdvanced(_ listener: @escaping @Sendable () -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Moves the time forward by `nanoseconds` and tells every loop on this clock.
    public func advance(nanoseconds: UInt64) {
        value.add(nanoseconds, ordering: .acquiringAndReleasing)
        for listener in listeners.withLock({ $0 }) { listener() }
    }

    /// Moves the time forward by `ms` milliseconds.
    public func advance(ms: Int) { advance(nanoseconds: UInt64(ms) * 1_000_000) }
}
