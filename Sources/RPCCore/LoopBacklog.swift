import Synchronization

/// Connections whose event loops have not yet taken what other threads handed them.
///
/// A producer on another thread (the event hub's fan-out) can hand frames to connections faster
/// than their loops take them in, above all when the producer and the loops share a core. Those
/// frames count against each stream's unwritten limit, so with nothing to slow the producer,
/// subscribers that read as fast as they can would be cut as slow consumers for the server's
/// own delay. A connection's port counts itself here while its queue for the loop holds more
/// than `threshold` bytes; a producer that sees `isBehind` between two units of work waits for
/// the loops, and so goes no faster than they do. A client that does not read is still caught
/// by its stream's limit: its bytes pile up in the connection's output, which the loop fills
/// whatever the client does.
public enum LoopBacklog {
    /// Bytes a port's queue for its loop may hold before the port counts as behind: a quarter of
    /// a stream's default unwritten limit (`ServerLimits.streamPendingLimitBytes`).
    public static let threshold = 256 * 1024

    private static let portsBehind = Atomic<Int>(0)

    /// True while some port's queue for its loop holds more than `threshold` bytes.
    public static var isBehind: Bool { portsBehind.load(ordering: .relaxed) > 0 }

    /// A port's queue went over `threshold` (for ports); matched by one `caughtUp`.
    public static func fellBehind() { portsBehind.add(1, ordering: .relaxed) }

    /// The loop took the queue of a port that had fallen behind, or the port is gone (for ports).
    public static func caughtUp() { portsBehind.subtract(1, ordering: .relaxed) }
}
