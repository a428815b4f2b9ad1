internal import Glibc

/// A counting semaphore for blocking a thread until another signals it, without Foundation.
///
/// The store's writer sleeps on one while its queue is empty, the service's maintenance loop
/// waits on one with a timeout, and tests block on one for a mutation's completion.
public final class BlockingSemaphore: @unchecked Sendable {
    // Invariant: `semaphore` is initialised in `init` and destroyed in `deinit` only; POSIX
    // semaphores are safe to use from any thread in between.
    private let semaphore: UnsafeMutablePointer<sem_t>

    public init(value: UInt32 = 0) {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, value)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Adds one to the count, waking one waiter.
    public func signal() {
        sem_post(semaphore)
    }

    /// Waits until the count is positive, then takes one.
    public func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }

    /// Like `wait()`, giving up after `milliseconds`; returns false on timeout.
    public func wait(milliseconds: Int64) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int64(deadline.tv_nsec) + (milliseconds % 1000) * 1_000_000
        deadline.tv_sec += Int(milliseconds / 1000) + Int(nanoseconds / 1_000_000_000)
        deadline.tv_nsec = Int(nanoseconds % 1_000_000_000)
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }
}
