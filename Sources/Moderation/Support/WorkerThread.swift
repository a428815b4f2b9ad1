internal import Glibc
internal import Synchronization

/// A named POSIX thread running one closure, which can be joined.
///
/// Foundation's `Thread` is not used here; a `@convention(c)` entry point cannot capture, so the
/// closure travels through `Unmanaged` as swift-nio's threads do. The store's writer and the
/// service's maintenance loop run on these.
public final class WorkerThread: Sendable {
    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    private let thread: pthread_t
    private let joined = Mutex(false)

    /// Starts `body` on a new thread named `name` (the first 15 bytes show in `top -H`).
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            WorkerThread.nameCurrentThread(start.name)
            start.body()
            return nil
        }, start)
        precondition(status == 0, "pthread_create failed with \(status)")
        self.thread = thread
    }

    /// Waits for the closure to return; later calls return at once.
    public func join() {
        let first = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        if first { pthread_join(thread, nil) }
    }

    /// Names the calling thread (Glibc's module hides `pthread_setname_np`; procfs does the same).
    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Runs `body` on a new thread nobody joins (for rare, short background work).
    public static func detached(name: String, _ body: @escaping @Sendable () -> Void) {
        let worker = WorkerThread(name: name, body)
        pthread_detach(worker.thread)
        worker.joined.withLock { $0 = true }
    }
}
