internal import CSystemShims
internal import Glibc
import Synchronization

/// A named POSIX thread running one closure, which can be joined: every thread the project
/// starts is one of these (event loops, workers, the store's writer, the event dispatcher, …).
///
/// Foundation's `Thread` is not used here; a `@convention(c)` entry point cannot capture, so the
/// closure travels through `Unmanaged` as swift-nio's threads do. A joinable thread that ends
/// unjoined keeps its stack mapped until the process exits: join it, or start it `detached`.
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
        let status = pthread_create(
            &thread, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                // pthread_setname_np (Glibc's module hides it without _GNU_SOURCE).
                start.name.withCString { cshim_set_thread_name($0) }
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

    /// Runs `body` on a new thread nobody joins, which gives its stack back when it ends (for
    /// threads that end on their own: a connection's reader, short background work).
    public static func detached(name: String, _ body: @escaping @Sendable () -> Void) {
        let worker = WorkerThread(name: name, body)
        worker.joined.withLock { $0 = true }
        pthread_detach(worker.thread)
    }
}
