internal import CSystemShims
internal import Glibc

/// Starts a joinable POSIX thread running `body`; returns its handle.
///
/// Exactly one of `joinThread` or `detachThread` must follow: a joinable thread that ends unjoined
/// keeps its whole stack mapped until the process exits.
///
/// Foundation's `Thread` is not used: the closure is boxed and passed through `Unmanaged`, since a
/// `@convention(c)` entry point cannot capture.
@discardableResult
func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        box.name.withCString { cshim_set_thread_name($0) }
        box.body()
        return nil
    }, box)
    precondition(status == 0, "pthread_create failed with \(status)")
    return thread
}

/// Waits for a thread started by `startThread` to end.
func joinThread(_ thread: pthread_t) {
    pthread_join(thread, nil)
}

/// Lets a thread started by `startThread` that nobody will join release its stack when it ends.
func detachThread(_ thread: pthread_t) {
    pthread_detach(thread)
}

/// The monotonic clock in nanoseconds.
public func monotonicNow() -> UInt64 { cshim_monotonic_ns() }

/// Wall-clock time in Unix milliseconds.
public func unixMillisecondsNow() -> Int64 { cshim_realtime_ms() }

/// CPUs this process may run on (its affinity mask), at least 1.
public func usableCPUCount() -> Int { Int(cshim_usable_cpu_count()) }

/// Resident memory of this process, in bytes.
public func residentMemoryBytes() -> UInt64 { cshim_resident_bytes() }

/// CPU time used by this process so far (user + system), in nanoseconds.
public func processCPUNanoseconds() -> UInt64 { cshim_process_cpu_ns() }
