/// A value behind a lock, with a condition variable to wait for it to change: `Mutex` plus
/// waiting, for threads that block (queues, one-shot results).
///
/// A pthread mutex or condition variable must stay at one address from its `init` to its
/// `destroy`, and Swift promises no fixed address for a stored property (`&property` may pass a
/// temporary). Both live in the tail of one heap block (`ManagedBuffer`, as swift-nio's `NIOLock`
/// keeps its mutex), with the value in the block's header. The value is reachable only inside
/// `withLock`, so "touched only with the lock held" needs no comment to hold.
///
/// Copies of a `ConditionLock` share one lock and one value. `signal` and `broadcast` may be
/// called with or without the lock held: a waiter rechecks its condition under the lock.
public struct ConditionLock<State> {
    @usableFromInline let storage: ConditionLockStorage<State>

    /// A lock holding `initial`.
    public init(_ initial: State) {
        let buffer = ConditionLockStorage<State>.create(minimumCapacity: 1) { _ in initial }
        storage = unsafeDowncast(buffer, to: ConditionLockStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { LockPrimitives.initialize($0) }
    }

    /// Runs `body` with the lock held.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body(&storage.header)
    }

    /// Takes the lock, waits (releasing it meanwhile) until `ready` holds, then runs `body` with
    /// the lock held.
    ///
    /// `ready` is checked again after each wake-up, so whoever makes it true must then call
    /// `signal` (one waiter is enough) or `broadcast` (all must look).
    @inlinable
    public func withLock<Result, Failure: Error>(
        when ready: (State) -> Bool, _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        while !ready(storage.header) {
            storage.withUnsafeMutablePointerToElements { LockPrimitives.wait($0) }
        }
        return try body(&storage.header)
    }

    /// Like `withLock(when:_:)`, giving up once `timeout` has passed on the monotonic clock.
    ///
    /// - Returns: what `body` returns, or nil when `ready` still does not hold at the deadline
    ///   (then `body` does not run).
    @inlinable
    public func withLock<Result, Failure: Error>(
        when ready: (State) -> Bool, timeout: Duration, _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        let deadline = LockPrimitives.deadline(after: timeout)
        lock()
        defer { unlock() }
        while !ready(storage.header) {
            let woken = storage.withUnsafeMutablePointerToElements { LockPrimitives.wait($0, until: deadline) }
            if !woken && !ready(storage.header) { return nil }
        }
        return try body(&storage.header)
    }

    /// Wakes one thread waiting in `withLock(when:…)`.
    @inlinable
    public func signal() {
        storage.withUnsafeMutablePointerToElements { LockPrimitives.signal($0) }
    }

    /// Wakes every thread waiting in `withLock(when:…)`.
    @inlinable
    public func broadcast() {
        storage.withUnsafeMutablePointerToElements { LockPrimitives.broadcast($0) }
    }

    @inlinable
    func lock() {
        storage.withUnsafeMutablePointerToElements { LockPrimitives.lock($0) }
    }

    @inlinable
    func unlock() {
        storage.withUnsafeMutablePointerToElements { LockPrimitives.unlock($0) }
    }
}

// Invariant: the state is only reached inside `withLock` (with the mutex held), and the pthread
// objects are safe to use from any thread between `init` and the storage's `deinit`.
extension ConditionLock: @unchecked Sendable where State: Sendable {}

/// The heap block of a `ConditionLock`: its state as the header, the pthread objects as the one
/// element, both at addresses that do not change while the block lives.
@usableFromInline
final class ConditionLockStorage<State>: ManagedBuffer<State, LockPrimitives> {
    deinit {
        withUnsafeMutablePointerToElements { LockPrimitives.destroy($0) }
    }
}
