public import RPCCore
import RPCPosix
import Synchronization
import ThreadSupport

/// The one thread that writes the server's log lines, in large blocks: every line of the process
/// goes through it, so lines never interleave (on a pipe, two writers' large writes can), and
/// the threads that log never make a system call for it.
///
/// Two ways in:
/// - `write(_:)`: an ordinary line (a start, a warning). Queued whatever the backlog, and the
///   writer woken at once: such lines are few and must not be lost.
/// - a `LineBuffer` per thread (`makeLineBuffer()`), for the access log's line per call: the thread
///   appends to a buffer of its own, which the writer takes when it is full or, for a part-filled
///   one, one flush interval after its first line. A full buffer that finds the backlog over
///   `maxQueuedBytes` is dropped and its lines counted (`droppedLines`): a writer that cannot
///   keep up costs lines, never the callers' time or unbounded memory.
public final class LogWriter: LogOutput {
    /// How much the writer holds and how long lines wait.
    public struct Configuration: Sendable {
        /// A thread's buffer is handed over when it holds this much.
        public var bufferBytes = 64 * 1024
        /// Full buffers waiting for the writer beyond this are dropped.
        public var maxQueuedBytes = 4 * 1024 * 1024
        /// How long a line may wait in a part-filled buffer before it is written.
        public var flushIntervalMs = 100

        public init() {}
    }

    private struct Queue {
        var blocks: [[UInt8]] = []
        var bytes = 0
        /// A thread buffer has had its first line since the last collection.
        var linesWaiting = false
        var stopping = false
    }

    public let configuration: Configuration
    private let destination: any LogOutput
    private let queue: ConditionLock<Queue>
    private let buffers = Mutex<[LineBuffer]>([])
    private let dropped = Atomic<UInt64>(0)
    private let thread = Mutex<WorkerThread?>(nil)
    /// Set once `stop` has written everything: lines that come later are written by their thread.
    private let stopped = Atomic<Bool>(false)

    /// Starts the writer thread, which writes to `destination` (standard error by default).
    public init(destination: any LogOutput = StandardErrorOutput(), configuration: Configuration = Configuration()) {
        self.destination = destination
        self.configuration = configuration
        queue = ConditionLock(Queue())
        thread.withLock { $0 = WorkerThread(name: "log-writer") { [self] in run() } }
    }

    /// Lines dropped because the writer could not keep up.
    public var droppedLines: UInt64 { dropped.load(ordering: .relaxed) }

    /// Queues ordinary lines (never dropped) and wakes the writer.
    public func write(_ lines: [UInt8]) {
        let stopped = queue.withLock { queue in
            guard !queue.stopping else { return true }
            queue.blocks.append(lines)
            queue.bytes += lines.count
            return false
        }
        if stopped {
            destination.write(lines)
        } else {
            queue.signal()
        }
    }

    /// A buffer for one thread's lines, registered with this writer.
    public func makeLineBuffer() -> LineBuffer {
        let buffer = LineBuffer(writer: self, capacity: configuration.bufferBytes)
        buffers.withLock { $0.append(buffer) }
        return buffer
    }

    /// Writes everything queued and buffered, then ends the writer thread. Lines written after
    /// it go straight to the destination.
    public func stop() {
        queue.withLock { $0.stopping = true }
        queue.signal()
        let worker = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        worker?.join()
        stopped.store(true, ordering: .releasing)
        buffers.withLock { $0 = [] }
    }

    // MARK: From the line buffers

    /// A buffer got its first line since it was last taken.
    func linesWaiting(in buffer: LineBuffer) {
        if stopped.load(ordering: .acquiring) {
            var block: [UInt8] = []
            buffer.take(into: &block)
            destination.write(block)
            return
        }
        let wake = queue.withLock { queue in
            defer { queue.linesWaiting = true }
            return !queue.linesWaiting
        }
        if wake { queue.signal() }
    }

    /// A full buffer's lines: queued, or dropped and counted when the backlog is over its bound.
    func submit(_ bytes: [UInt8], lines: Int) {
        if stopped.load(ordering: .acquiring) {
            destination.write(bytes)
            return
        }
        let accepted = queue.withLock { queue in
            guard queue.stopping || queue.bytes + bytes.count <= configuration.maxQueuedBytes else { return false }
            queue.blocks.append(bytes)
            queue.bytes += bytes.count
            return true
        }
        if accepted {
            queue.signal()
        } else {
            dropped.add(UInt64(lines), ordering: .relaxed)
        }
    }

    // MARK: The writer thread

    private func run() {
        while true {
            let linesWaiting = queue.withLock(when: {
                !$0.blocks.isEmpty || $0.linesWaiting || $0.stopping
            }) { queue in queue.linesWaiting }
            let (blocks, stopping) = takeBlocks(afterWaitingLines: linesWaiting)
            for block in blocks { destination.write(block) }
            if stopping {
                drainAndStop()
                return
            }
            guard linesWaiting else { continue }
            // Part-filled buffers wait one interval (so a busy thread fills them meanwhile), while
            // ordinary lines and full buffers that arrive are written as they come.
            let deadline = monotonicNow() + UInt64(configuration.flushIntervalMs) * 1_000_000
            while true {
                let now = monotonicNow()
                guard now < deadline else { break }
                let woken: Bool? = queue.withLock(
                    when: { !$0.blocks.isEmpty || $0.stopping }, timeout: .nanoseconds(Int64(deadline - now))
                ) { _ in true }
                guard woken != nil else { continue }
                let (more, stop) = takeBlocks(afterWaitingLines: true)
                for block in more { destination.write(block) }
                if stop { break }
            }
            queue.withLock { $0.linesWaiting = false }
            collect()
        }
    }

    /// Takes the queued blocks (ordinary lines, full buffers) to write; when the threads' buffers
    /// have lines waiting, writes those first: they are older, and the log stays in time order
    /// (an access line is never written after a later warning, as it would be a whole flush
    /// interval later). Collected before the blocks are taken, so that while a slow destination
    /// holds the writer the queue keeps counting them against its bound — and again after, when
    /// the blocks taken arrived since the check (lines buffered before them are there by then).
    private func takeBlocks(afterWaitingLines linesWaiting: Bool) -> (blocks: [[UInt8]], stopping: Bool) {
        var collected = false
        if linesWaiting && queue.withLock({ !$0.blocks.isEmpty }) {
            collect()
            collected = true
        }
        let taken = queue.withLock { queue in (Self.takeBlocks(&queue), queue.stopping) }
        if linesWaiting && !collected && !taken.0.isEmpty { collect() }
        return taken
    }

    /// Writes what the line buffers hold, and forgets the buffers of threads that ended.
    private func collect() {
        let registered = buffers.withLock { buffers in
            buffers.removeAll { $0.isAbandoned && $0.isEmpty }
            return buffers
        }
        var block: [UInt8] = []
        for buffer in registered {
            buffer.take(into: &block)
            if block.count >= configuration.bufferBytes {
                destination.write(block)
                block.removeAll(keepingCapacity: true)
            }
        }
        if !block.isEmpty { destination.write(block) }
    }

    private static func takeBlocks(_ queue: inout Queue) -> [[UInt8]] {
        defer {
            queue.blocks = []
            queue.bytes = 0
        }
        return queue.blocks
    }

    private func drainAndStop() {
        collect()
        let rest = queue.withLock { Self.takeBlocks(&$0) }
        for block in rest { destination.write(block) }
    }
}

/// One thread's lines on their way to the `LogWriter`: written in place into memory of its own,
/// under a lock of its own, which only the writer's collection (once per flush interval) ever
/// contends. A full buffer's memory is handed to the writer as it is (no copy) and fresh memory
/// taken for the next lines.
public final class LineBuffer: Sendable {
    private struct State {
        /// Memory for lines: all of it counted as elements (left uninitialized until written),
        /// the lines in `storage[0..<count]`.
        var storage: [UInt8]
        var count = 0
        var lines = 0
        var abandoned = false
    }

    /// Strong: the writer's registry holds its buffers until `stop`, threads hold theirs.
    private let writer: LogWriter
    private let capacity: Int
    private let state: Mutex<State>

    fileprivate init(writer: LogWriter, capacity: Int) {
        self.writer = writer
        self.capacity = capacity
        state = Mutex(State(storage: Self.memory(capacity)))
    }

    /// `bytes` of memory for lines, not initialized (UInt8 is trivial: nothing reads a byte
    /// before a line writes it).
    private static func memory(_ bytes: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes) { _, count in count = bytes }
    }

    /// Appends one line of at most `maximumBytes` that `render` writes at the pointer it is
    /// given (newline included), returning how many bytes it wrote.
    @inline(__always)
    func append(maximumBytes: Int, _ render: (UnsafeMutablePointer<UInt8>) -> Int) {
        var full: [UInt8]?
        var fullLines = 0
        let first = state.withLock { state -> Bool in
            if state.count + maximumBytes > state.storage.count {
                // No room: the lines so far go first (and a giant line gets room of its own).
                if state.count > 0 { (full, fullLines) = Self.take(&state, next: max(capacity, maximumBytes)) }
                if maximumBytes > state.storage.count { state.storage = Self.memory(maximumBytes) }
            }
            let first = state.count == 0
            let start = state.count
            let written = state.storage.withUnsafeMutableBufferPointer { memory -> Int in
                let count = render(memory.baseAddress! + start)
                precondition(count <= maximumBytes, "a log line outgrew the room made for it")
                return count
            }
            state.count += written
            state.lines += 1
            if state.count >= capacity, full == nil { (full, fullLines) = Self.take(&state, next: capacity) }
            return first
        }
        if let full { writer.submit(full, lines: fullLines) }
        if first { writer.linesWaiting(in: self) }
    }

    /// The thread that owned this buffer has ended or moved to another writer.
    public func abandon() { state.withLock { $0.abandoned = true } }

    var isAbandoned: Bool { state.withLock { $0.abandoned } }
    var isEmpty: Bool { state.withLock { $0.count == 0 } }

    /// Moves the buffered lines to the end of `block`.
    func take(into block: inout [UInt8]) {
        state.withLock { state in
            guard state.count > 0 else { return }
            block.append(contentsOf: state.storage[0..<state.count])
            state.count = 0
            state.lines = 0
        }
    }

    /// The buffered lines as they are (their memory cut to their length), and their count; fresh
    /// memory of `next` bytes takes their place.
    private static func take(_ state: inout State, next: Int) -> ([UInt8], Int) {
        var lines = memory(next)
        swap(&lines, &state.storage)
        lines.removeLast(lines.count - state.count)
        defer {
            state.count = 0
            state.lines = 0
        }
        return (lines, state.lines)
    }
}
