internal import CSystemShims
internal import Glibc
import Synchronization
import ThreadSupport

/// Something an event loop notifies when its file descriptor is ready.
protocol EventHandler: AnyObject {
    func handleEvent(_ events: UInt32)
}

/// Something an event loop flushes once per turn, after handling every ready event.
protocol Flushable: AnyObject {
    func flush()
}

/// epoll event bits.
enum EpollEvents {
    static let input: UInt32 = 0x001
    static let output: UInt32 = 0x004
    static let error: UInt32 = 0x008
    static let hangUp: UInt32 = 0x010
    static let readHangUp: UInt32 = 0x2000
    static let exclusive: UInt32 = 1 << 28
}

/// One thread running epoll over its sockets, an eventfd inbox and a timerfd of timers.
///
/// Everything registered with a loop is confined to its thread. Other threads reach it only with
/// `execute`, which appends to a locked inbox and writes the eventfd once per batch of tasks.
/// Registrations carry an id next to the fd in `epoll_data`, so an event for a closed (and
/// possibly reused) fd in the same batch is recognised as stale and skipped. After each batch of
/// events, every connection that produced output is flushed once.
public final class EventLoop: @unchecked Sendable {
    // Invariant: all mutable state except `inbox` and `wakePending` is touched only on the loop thread.
    public let index: Int
    private let epollFD: Int32
    private let wakeFD: Int32
    private let timerFD: Int32
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let wakePending = Atomic<Bool>(false)
    private let loopThread = Atomic<UInt>(0)
    private var handlers: [UInt32: any EventHandler] = [:]
    private var nextRegistration: UInt32 = 1
    private var timers = TimerHeap()
    private var armedDeadline: UInt64 = .max
    private var dirty: [any Flushable] = []
    private var running = true
    private var thread: WorkerThread?

    private static let wakeRegistration: UInt32 = 0xFFFF_FFFE
    private static let timerRegistration: UInt32 = 0xFFFF_FFFF

    /// Creates the loop's epoll, eventfd and timerfd; `start` runs it on a new thread.
    public init(index: Int) throws(SystemError) {
        self.index = index
        epollFD = cshim_epoll_create()
        wakeFD = cshim_eventfd()
        timerFD = cshim_timerfd()
        guard epollFD >= 0, wakeFD >= 0, timerFD >= 0 else { throw SystemError("create event loop", errno: errno) }
        _ = cshim_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, EpollEvents.input, Self.pack(Self.wakeRegistration, wakeFD))
        _ = cshim_epoll_ctl(epollFD, EPOLL_CTL_ADD, timerFD, EpollEvents.input, Self.pack(Self.timerRegistration, timerFD))
    }

    deinit {
        close(epollFD)
        close(wakeFD)
        close(timerFD)
    }

    /// Runs the loop on a new thread, pinned to `cpu` when given.
    public func start(name: String, cpu: Int32? = nil) {
        thread = WorkerThread(name: name) { [self] in
            if let cpu { _ = cshim_pin_thread(cpu) }
            loopThread.store(UInt(pthread_self()), ordering: .releasing)
            run()
        }
    }

    /// True on the loop's own thread.
    public var inEventLoop: Bool {
        loopThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Runs `task` on the loop thread, soon. Callable from any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(task) }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            _ = cshim_eventfd_signal(wakeFD)
        }
    }

    /// Stops the loop after its current turn and waits for its thread to end.
    public func stopAndWait() {
        execute { [self] in running = false }
        if let thread, !inEventLoop { thread.join() }
    }

    // MARK: Loop-thread API

    /// Registers `fd` for `events`; the returned id identifies this registration.
    func register(fd: Int32, events: UInt32, handler: any EventHandler) -> UInt32 {
        var id = nextRegistration
        nextRegistration = nextRegistration >= Self.wakeRegistration - 1 ? 1 : nextRegistration + 1
        while handlers[id] != nil { id += 1 }
        handlers[id] = handler
        _ = cshim_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, events, Self.pack(id, fd))
        return id
    }

    /// Changes the events of a registration.
    func modify(fd: Int32, registration: UInt32, events: UInt32) {
        _ = cshim_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events, Self.pack(registration, fd))
    }

    /// Removes a registration (before the fd is closed).
    func deregister(fd: Int32, registration: UInt32) {
        _ = cshim_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0, 0)
        handlers[registration] = nil
    }

    /// Calls `callback` on the loop at monotonic time `deadline`.
    func schedule(at deadline: UInt64, _ callback: @escaping () -> Void) {
        timers.push(deadline: deadline, callback)
        if deadline < armedDeadline {
            armedDeadline = deadline
            _ = cshim_timerfd_arm_at(timerFD, max(deadline, 1))
        }
    }

    /// Calls `callback` every `intervalNanoseconds` until it returns false.
    func scheduleRepeating(every intervalNanoseconds: UInt64, _ callback: @escaping () -> Bool) {
        func arm(_ at: UInt64) {
            schedule(at: at) {
                if callback() { arm(at + intervalNanoseconds) }
            }
        }
        arm(monotonicNow() + intervalNanoseconds)
    }

    /// Asks the loop to flush `target` at the end of the current turn (once, however often asked).
    func markDirty(_ target: any Flushable) {
        dirty.append(target)
    }

    // MARK: Running

    private func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
        let data = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
        defer {
            events.deallocate()
            data.deallocate()
        }
        while running {
            let count = cshim_epoll_wait(epollFD, events, data, Int32(capacity), -1)
            if count < 0 { continue }
            for i in 0..<Int(count) {
                let registration = UInt32(truncatingIfNeeded: data[i] >> 32)
                switch registration {
                case Self.wakeRegistration:
                    drainInbox()
                case Self.timerRegistration:
                    _ = cshim_timerfd_drain(timerFD)
                    runDueTimers()
                default:
                    handlers[registration]?.handleEvent(events[i])
                }
            }
            flushDirty()
        }
        // Tasks that arrived during the last turn still run (they may release resources).
        drainInbox()
        flushDirty()
        // Nothing runs here any more: let go of timers and handlers, which may hold the loop's
        // owner (and so the loop, its epoll, eventfd and timerfd) in a cycle.
        timers = TimerHeap()
        handlers.removeAll()
    }

    private func drainInbox() {
        // Drain the eventfd before clearing the flag: the other way round, a producer that signals
        // in between has its signal drained while the flag stays set, and every later `execute`
        // skips the signal — the inbox would never wake the loop again.
        _ = cshim_eventfd_drain(wakeFD)
        wakePending.store(false, ordering: .releasing)
        let tasks = inbox.withLock { tasks in
            defer { tasks.removeAll(keepingCapacity: true) }
            return tasks
        }
        for task in tasks { task() }
    }

    private func runDueTimers() {
        let now = monotonicNow()
        armedDeadline = .max
        while let next = timers.peekDeadline, next <= now {
            timers.pop()()
        }
        if let next = timers.peekDeadline {
            armedDeadline = next
            _ = cshim_timerfd_arm_at(timerFD, next)
        }
    }

    private func flushDirty() {
        while !dirty.isEmpty {
            let batch = dirty
            dirty.removeAll(keepingCapacity: true)
            for target in batch { target.flush() }
        }
    }

    private static func pack(_ registration: UInt32, _ fd: Int32) -> UInt64 {
        UInt64(registration) << 32 | UInt64(UInt32(bitPattern: fd))
    }
}

/// A binary min-heap of timers by deadline; equal deadlines run in scheduling order.
struct TimerHeap {
    private struct Entry {
        let deadline: UInt64
        let order: UInt64
        let callback: () -> Void
    }

    private var entries: [Entry] = []
    private var counter: UInt64 = 0

    var peekDeadline: UInt64? { entries.first?.deadline }
    var count: Int { entries.count }

    mutating func push(deadline: UInt64, _ callback: @escaping () -> Void) {
        counter += 1
        entries.append(Entry(deadline: deadline, order: counter, callback: callback))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> () -> Void {
        let top = entries[0]
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < entries.count && less(left, smallest) { smallest = left }
                if right < entries.count && less(right, smallest) { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top.callback
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        entries[a].deadline < entries[b].deadline
            || (entries[a].deadline == entries[b].deadline && entries[a].order < entries[b].order)
    }
}
