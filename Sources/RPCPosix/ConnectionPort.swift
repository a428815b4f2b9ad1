internal import CSystemShims
internal import Glibc
import RPCCore
import Synchronization
import ThreadSupport

/// What a connection's port hands response parts to, on the connection's loop.
protocol PortTarget: AnyObject {
    /// `CallPort.replyOnLoop` for the connection: false when the call is no longer live.
    func replyInline(streamID: UInt32, _ write: MessageWriter) -> Bool
    func deliver(streamID: UInt32, _ part: ResponsePart)
    /// A part the port queued alone.
    func deliver(_ part: OutgoingPart)
    /// Parts the port queued, in order, in one go.
    func deliver(_ parts: [OutgoingPart])
    func largeRequestTakenIn()
}

/// A connection's `CallPort`: brings calls' response parts back to the connection on its loop.
///
/// Parts from other threads wait in the port's queue, in order, and the loop takes them all at
/// once: a fan-out's messages to one connection's many streams cost one task on the loop, not
/// one each. Parts handed over on the loop go straight to the connection, after whatever the
/// queue still holds.
final class ConnectionPort: CallPort, LoopTask, @unchecked Sendable {
    // Invariant: `connection`, `detached` and `spare` are only touched on `loop`'s thread; `connection` is
    // never dereferenced once `detached` is set (which the connection does when it closes).
    private unowned let loop: EventLoop
    private unowned(unsafe) var connection: (any PortTarget)?
    private var detached = false
    private let inboxBytes = Atomic<Int>(0)
    private let outboundBytes = Atomic<Int>(0)
    private let queue = Mutex(Queue())
    /// The queue holds frames (read on the loop without its lock, to skip an empty one).
    private let queued = Atomic<Bool>(false)
    /// The queue's other storage, empty (loop only): see `runOnLoop`.
    private var spare: [OutgoingPart] = []
    /// Where the queue's frame storage starts, for `prefetchQueue`: recorded at each hand-over,
    /// possibly stale (an append that grew the array moved it), never dereferenced.
    private let framesAddress = Atomic<UInt>(0)

    private struct Queue {
        /// The part queued first, kept inline: a fan-out over one socket per subscriber queues
        /// one part per port, and reaching the array's storage for it would be one more cache
        /// miss per delivery. Nil while the queue is empty.
        var first: OutgoingPart?
        /// The parts queued after `first`.
        var frames: [OutgoingPart] = []
        var bytes = 0
        /// A task to take the frames is in the loop's inbox.
        var scheduled = false
        /// `bytes` went over `LoopBacklog.threshold`, and the port counts in `LoopBacklog` until
        /// the loop takes the frames.
        var behind = false
    }

    /// The loop's thread, recorded by `attach` on it. A fan-out asks for every message whether
    /// it runs there, and asking the loop would load the unowned reference strongly: a retain
    /// and a release each time, and one more object's cache line.
    private let loopThread = Atomic<UInt>(0)

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Relaxed is enough: only the loop's thread can find its own id, and it wrote it.
    private var onLoopThread: Bool { loopThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    deinit {
        if isBehind { LoopBacklog.caughtUp() }
    }

    /// Called once by the connection when it is set up (on the loop).
    func attach(_ connection: any PortTarget) {
        loop.assertInEventLoop()
        loopThread.store(UInt(pthread_self()), ordering: .relaxed)
        self.connection = connection
    }

    /// Called by the connection when it closes (on the loop).
    func detach() {
        loop.assertInEventLoop()
        detached = true
        connection = nil
    }

    var pendingBytes: Int { inboxBytes.load(ordering: .relaxed) + outboundBytes.load(ordering: .relaxed) }

    /// The queue for the loop holds more than `LoopBacklog.threshold` bytes (the port counts there).
    var isBehind: Bool { queue.withLock { $0.behind } }

    func publishOutbound(_ bytes: Int) { outboundBytes.store(bytes, ordering: .relaxed) }

    func replyOnLoop(streamID: UInt32, _ write: MessageWriter) -> Bool {
        guard onLoopThread else { return false }
        runOnLoop()
        guard !detached, let connection else { return true } // gone: nothing more to send
        return connection.replyInline(streamID: streamID, write)
    }

    func largeRequestTakenIn() {
        if onLoopThread {
            if !detached { connection?.largeRequestTakenIn() }
            return
        }
        loop.execute { [self] in
            if !detached { connection?.largeRequestTakenIn() }
        }
    }

    func send(streamID: UInt32, _ part: ResponsePart) {
        if onLoopThread {
            runOnLoop()
            if !detached { connection?.deliver(streamID: streamID, part) }
            return
        }
        enqueue(OutgoingPart(streamID: streamID, part))
    }

    func sendMessage(streamID: UInt32, body: [UInt8]) {
        send(streamID: streamID, .message(ResponseMessage(bytes: body)))
    }

    private func enqueue(_ frame: OutgoingPart) {
        let size = frame.wireSize
        inboxBytes.add(size, ordering: .relaxed)
        let (schedule, fellBehind) = queue.withLock { queue in
            if queue.first == nil {
                assert(queue.frames.isEmpty, "frames queued behind no first frame")
                queue.first = frame
            } else {
                queue.frames.append(frame)
            }
            queue.bytes += size
            let fellBehind = !queue.behind && queue.bytes > LoopBacklog.threshold
            if fellBehind { queue.behind = true }
            defer { queue.scheduled = true }
            return (!queue.scheduled, fellBehind)
        }
        if fellBehind { LoopBacklog.fellBehind() }
        queued.store(true, ordering: .releasing)
        if schedule { loop.execute(self) }
    }

    /// Its connection, which `runOnLoop` hands the frames to.
    func prefetchReached() {
        if !detached, let connection { MemoryHint.prefetch(connection, lines: 3) }
    }

    /// Hands the queued frames to the connection (on the loop).
    func runOnLoop() {
        guard queued.load(ordering: .acquiring) else { return }
        // The queue's storage and `spare` trade places at each hand-over, so neither side
        // allocates for the usual few frames a turn; a large one is not kept, so an idle port
        // holds little.
        var frames: [OutgoingPart] = []
        swap(&frames, &spare)
        let (first, bytes, wasBehind) = queue.withLock { queue in
            queued.store(false, ordering: .releasing)
            swap(&frames, &queue.frames)
            framesAddress.store(Self.storageAddress(of: queue.frames), ordering: .relaxed)
            defer { queue = Queue(frames: queue.frames) }
            return (queue.first, queue.bytes, queue.behind)
        }
        if wasBehind { LoopBacklog.caughtUp() }
        inboxBytes.subtract(bytes, ordering: .relaxed)
        if !detached, let first { connection?.deliver(first) }
        if !detached, !frames.isEmpty { connection?.deliver(frames) }
        frames.removeAll(keepingCapacity: frames.capacity <= Self.framesKept)
        spare = frames
    }

    /// Frames of capacity a queue keeps between hand-overs (`runOnLoop`).
    static let framesKept = 32

    /// The next `enqueue` will most likely append to the frames array (over one socket per
    /// subscriber a port under load holds a few): its header and first elements, whose first
    /// touch was the largest stall left in a sustained fan-out's walk.
    func prefetchQueue() {
        let address = framesAddress.load(ordering: .relaxed)
        guard address > Self.arrayHeaderBytes, let start = UnsafeRawPointer(bitPattern: address - Self.arrayHeaderBytes)
        else { return }
        MemoryHint.prefetch(address: start, lines: 2)
    }

    /// An array's storage object before its elements: the object header, count and capacity.
    private static let arrayHeaderBytes: UInt = 32

    private static func storageAddress(of frames: [OutgoingPart]) -> UInt {
        frames.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}
