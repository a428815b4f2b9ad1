internal import Glibc

/// A pthread mutex and condition variable, used only through a pointer to heap memory that
/// does not move (a `ConditionLock`'s storage).
///
/// The operations are static functions over that pointer and not inlinable, so the callers'
/// inlined, specialised code needs nothing from Glibc. The condition variable waits on the
/// monotonic clock, so a timed wait does not stretch or shrink when the wall clock is set.
@usableFromInline
struct LockPrimitives {
    var mutex = pthread_mutex_t()
    var condition = pthread_cond_t()

    /// Initialises both objects in place at `primitives`.
    @usableFromInline
    static func initialize(_ primitives: UnsafeMutablePointer<LockPrimitives>) {
        primitives.initialize(to: LockPrimitives())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let conditionStatus = pthread_cond_init(primitives.pointer(to: \.condition)!, &attributes)
        pthread_condattr_destroy(&attributes)
        precondition(conditionStatus == 0, "pthread_cond_init failed with \(conditionStatus)")
        let mutexStatus = pthread_mutex_init(primitives.pointer(to: \.mutex)!, nil)
        precondition(mutexStatus == 0, "pthread_mutex_init failed with \(mutexStatus)")
    }

    /// Destroys both objects; nobody may hold or wait on them any more.
    @usableFromInline
    static func destroy(_ primitives: UnsafeMutablePointer<LockPrimitives>) {
        pthread_cond_destroy(primitives.pointer(to: \.condition)!)
        pthread_mutex_destroy(primitives.pointer(to: \.mutex)!)
        primitives.deinitialize(count: 1)
    }

    @usableFromInline
    static func lock(_ primitives: UnsafeMutablePointer<LockPrimitives>) {
        let status = pthread_mutex_lock(primitives.pointer(to: \.mutex)!)
        precondition(status == 0, "pthread_mutex_lock failed with \(status)")
    }

    @usableFromInline
    static func unlock(_ primitives: UnsafeMutablePointer<LockPrimitives>) {
        let status = pthread_mutex_unlock(primitives.pointer(to: \.mutex)!)
        precondition(status == 0, "pthread_mutex_unlock failed with \(status)")
    }

    /// Releases the mutex (held by the caller) until signalled, then takes it again.
    @usableFromInline
    static func wait(_ primitives: UnsafeMutablePointer<LockPrimitives>) {
        let status = pthread_cond_wait(primitives.pointer(to: \.condition)!, primitives.pointer(to: \.mutex)!)
        precondition(status == 0, "pthread_cond_wait failed with \(status)")
    }

    /// Like `wait`, giving up at `deadline` (monotonic nanoseconds); false when it has passed.
    @usableFromInline
    static func wait(_ primitives: UnsafeMutablePointer<LockPrimitives>, until deadline: UInt64) -> Bool {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        let status = pthread_cond_timedwait(
            primitives.pointer(to: \.condition)!, primitives.pointer(to: \.mutex)!, &time)
        precondition(status == 0 || status == ETIMEDOUT, "pthread_cond_timedwait failed with \(status)")
        return status == 0
    }

    @usableFromInline
    static func signal(_ primitives: UnsafeMutablePointer<LockPrimitives>) {
        pthread_cond_signal(primitives.pointer(to: \.condition)!)
    }

    @usableFromInline
    static func broadcast(_ primitives: UnsafeMutablePointer<LockPrimitives>) {
        pthread_cond_broadcast(primitives.pointer(to: \.condition)!)
    }

    /// The monotonic time `timeout` from now, in nanoseconds (a negative timeout means now; a
    /// huge one saturates).
    @usableFromInline
    static func deadline(after timeout: Duration) -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let start = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        let (seconds, attoseconds) = timeout.components
        guard seconds >= 0, attoseconds >= 0 else { return start }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let wait = overflow ? UInt64.max : whole &+ UInt64(attoseconds / 1_000_000_000)
        let (deadline, late) = start.addingReportingOverflow(wait < whole ? UInt64.max : wait)
        return late ? .max : deadline
    }
}
