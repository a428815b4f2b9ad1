internal import CSystemShims
internal import Glibc
public import RPCCore
import Synchronization
import ThreadSupport

/// Something an event loop notifies when its file descriptor is ready.
protocol EventHandler: AnyObject {
    func handleEvent(_ events: EpollEvents)
}

/// Something an event loop flushes once per turn, after handling every ready event.
protocol Flushable: AnyObject {
    func flush()
    /// A hint that `flush` comes soon, once the object itself is in cache (the loop asked for it
    /// by address, two places earlier): asks for the objects `flush` reaches from it. The
    /// default does nothing.
    func prefetchReached()
}

extension Flushable {
    func prefetchReached() {}
}

/// epoll event bits (`EPOLLIN`, …): what a registration waits for, and what a wake-up reports.
/// Public for the other epoll user, the load generator.
public struct EpollEvents: OptionSet, Sendable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `EPOLLIN`: readable (or, on a listener, a connection to accept).
    public static let input = EpollEvents(rawValue: 0x001)
    /// `EPOLLOUT`: writable again.
    public static let output = EpollEvents(rawValue: 0x004)
    /// `EPOLLERR`: always reported, never asked for.
    public static let error = EpollEvents(rawValue: 0x008)
    /// `EPOLLHUP`: always reported, never asked for.
    public static let hangUp = EpollEvents(rawValue: 0x010)
    /// `EPOLLRDHUP`: the peer shut down its writing side.
    public static let readHangUp = EpollEvents(rawValue: 0x2000)
    /// `EPOLLEXCLUSIVE`: of the loops watching one fd, wake one.
    public static let exclusive = EpollEvents(rawValue: 1 << 28)
}

/// One thread running epoll over its sockets, an eventfd inbox and a timerfd of timers.
///
/// Everything registered with a loop is confined to its thread. Other threads reach it only with
/// `execute`, which appends to a locked inbox and writes the eventfd once per batch of tasks.
/// The loop-thread API asserts it is called there (`assertInEventLoop`, debug builds only).
/// Registrations carry an id next to the fd in `epoll_data`, so an event for a closed (and
/// possibly reused) fd in the same batch is recognised as stale and skipped. A failed `epoll_ctl`
/// is thrown to the caller (a connection that cannot be watched is closed). Timers are handles
/// that can be cancelled, so a timer never fires for something that has gone. After each batch
/// of events, every connection that produced output is flushed once.
///
/// Timers run on the loop's `clock`: the system's monotonic clock, through a timerfd armed for
/// the earliest deadline; or a test's `ManualClock`, which arms nothing and tells the loop when
/// the test moves it, so timeouts are tested without sleeping (swift-nio's
/// `EmbeddedEventLoop.advanceTime`). How long a turn's handlers have run (`turnBudgetNanoseconds`)
/// is work done, measured on the system clock whatever the loop's clock is.
public final class EventLoop: @unchecked Sendable {
    // Invariant: all mutable state except `inbox`, `wakePending` and `timerRunPending` is touched
    // only on the loop thread.
    public let index: Int
    /// The time timers are scheduled on.
    public let clock: any ServerClock
    /// False on a manual clock: its deadlines mean nothing to the kernel's timer.
    private let armsKernelTimer: Bool
    /// A run of the due timers is in the inbox (manual clock only).
    private let timerRunPending = Atomic<Bool>(false)
    private let epollFD: Int32
    private let wakeFD: Int32
    private let timerFD: Int32
    private let inbox = Mutex<[InboxItem]>([])
    private let wakePending = Atomic<Bool>(false)
    private let loopThread = Atomic<UInt>(0)
    private var handlers: [UInt32: any EventHandler] = [:]
    private var nextRegistration: UInt32 = 1
    private var timers = TimerHeap()
    private var armedDeadline: UInt64 = .max
    private var dirty: [DirtyTarget] = []
    private var running = true
    private var thread: WorkerThread?
    /// Turns of the loop so far (one `epoll_wait` and what it reported): lets handlers share out
    /// work per turn (the TLS handshakes a loop advances in one turn).
    private(set) var turn: UInt64 = 0

    private static let wakeRegistration: UInt32 = 0xFFFF_FFFE
    private static let timerRegistration: UInt32 = 0xFFFF_FFFF

    /// Creates the loop's epoll, eventfd and timerfd; `start` runs it on a new thread.
    public init(index: Int, clock: any ServerClock = SystemClock.shared) throws(SystemError) {
        self.index = index
        self.clock = clock
        armsKernelTimer = clock === SystemClock.shared
        epollFD = cshim_epoll_create()
        wakeFD = cshim_eventfd()
        timerFD = cshim_timerfd()
        guard epollFD >= 0, wakeFD >= 0, timerFD >= 0 else { throw SystemError("create event loop", errno: errno) }
        // (A throw from here on still runs deinit, which closes the three descriptors.)
        try Self.control(
            epollFD, EPOLL_CTL_ADD, wakeFD, .input, Self.pack(Self.wakeRegistration, wakeFD), "watch the loop's eventfd"
        )
        try Self.control(
            epollFD, EPOLL_CTL_ADD, timerFD, .input, Self.pack(Self.timerRegistration, timerFD),
            "watch the loop's timerfd")
        if !armsKernelTimer {
            clock.whenAdvanced { [weak self] in self?.runTimersSoon() }
        }
    }

    /// The loop's clock now: what timers are scheduled against.
    public var now: UInt64 { clock.now }

    /// Manual clock: runs the due timers on the loop's thread, soon (once, however often asked
    /// before it runs).
    private func runTimersSoon() {
        guard !timerRunPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        execute { [self] in
            timerRunPending.store(false, ordering: .releasing)
            runDueTimers()
        }
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

    /// Traps in debug builds when called off the loop's thread; compiled out of release builds.
    /// Loop-owned state (registrations, timers, connections) calls it on every entry point.
    @inline(__always)
    func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "loop-owned state touched off the thread of event loop \(index)", file: file, line: line)
    }

    /// Runs `task` on the loop thread, soon. Callable from any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(.closure(task)) }
        wakeUnlessPending()
    }

    /// Runs `task.runOnLoop()` on the loop thread, soon: `execute` without a closure to allocate,
    /// for work handed over very often (a connection's queued frames). Callable from any thread.
    ///
    /// Inside a `WakeDeferral` batch the task is held on the calling thread and handed over, with
    /// the batch's other tasks for this loop, when the batch ends: a loop woken meanwhile for
    /// something else (a reply) does not start on half of a fan-out and write it in pieces.
    func execute(_ task: any LoopTask) {
        if WakeDeferral.holdBack(self) {
            Self.held.value.add(task, for: self)
            return
        }
        inbox.withLock { $0.append(.task(task)) }
        wakeUnlessPending()
    }

    /// Signals the eventfd unless a signal is already pending.
    private func wakeUnlessPending() {
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            _ = cshim_eventfd_signal(wakeFD)
        }
    }

    /// Tasks a `WakeDeferral` batch holds, per loop, on the batching thread.
    private static let held = ThreadLocal { HeldTasks() }

    /// What waits for the end of the current turn's events, on a loop's thread.
    private static let turnInput = ThreadLocal { TurnInputTasks() }

    /// Runs `task` on this thread's event loop once the handlers of the turn's events have run
    /// (every ready connection's input read and its calls started), before the turn's output is
    /// written; at once on a thread that is no loop's. So calls of a turn that wait on something
    /// shareable (a store's check of its cache, made once for every call that arrived before it)
    /// wait once per turn, not once per connection.
    public static func afterTurnInput(_ task: @escaping () -> Void) {
        let waiting = turnInput.value
        guard waiting.onLoop else { return task() }
        waiting.tasks.append(task)
    }

    /// Runs what `afterTurnInput` put off, and what those tasks put off in turn.
    private func runAfterTurnInput() {
        let waiting = Self.turnInput.value
        while !waiting.tasks.isEmpty {
            let tasks = waiting.tasks
            waiting.tasks.removeAll(keepingCapacity: true)
            for task in tasks { task() }
        }
    }

    /// Stops the loop after its current turn and waits for its thread to end.
    public func stopAndWait() {
        execute { [self] in running = false }
        if let thread, !inEventLoop { thread.join() }
    }

    // MARK: Loop-thread API

    /// Registers `fd` for `events`; the returned id identifies this registration.
    /// - Throws: `SystemError` when epoll refuses the fd (nothing is registered then).
    func register(fd: Int32, events: EpollEvents, handler: any EventHandler) throws(SystemError) -> UInt32 {
        assertInEventLoop()
        var id = nextRegistration
        nextRegistration = nextRegistration >= Self.wakeRegistration - 1 ? 1 : nextRegistration + 1
        while handlers[id] != nil { id += 1 }
        try Self.control(epollFD, EPOLL_CTL_ADD, fd, events, Self.pack(id, fd), "watch fd \(fd)")
        handlers[id] = handler
        return id
    }

    /// Changes the events of a registration.
    /// - Throws: `SystemError` when epoll refuses (the registration is unchanged).
    func modify(fd: Int32, registration: UInt32, events: EpollEvents) throws(SystemError) {
        assertInEventLoop()
        try Self.control(
            epollFD, EPOLL_CTL_MOD, fd, events, Self.pack(registration, fd), "change the events of fd \(fd)")
    }

    /// Removes a registration (before the fd is closed). Its handler is dropped even when epoll
    /// refuses, so no event reaches it any more.
    /// - Throws: `SystemError` when epoll refuses: an fd another loop also watches (the listener)
    ///   would then go on waking this one until it is closed.
    func deregister(fd: Int32, registration: UInt32) throws(SystemError) {
        assertInEventLoop()
        handlers[registration] = nil
        standings[registration] = nil
        try Self.control(epollFD, EPOLL_CTL_DEL, fd, [], 0, "stop watching fd \(fd)")
    }

    /// Calls `callback` on the loop at monotonic time `deadline`, unless cancelled first.
    func schedule(at deadline: UInt64, _ callback: @escaping () -> Void) -> TimerHandle {
        assertInEventLoop()
        let timer = TimerHandle(deadline: deadline, work: .once(callback))
        add(timer)
        return timer
    }

    /// Calls `callback` in the loop's next turn, after the events already waiting: work that
    /// continues later so that one connection does not hold the turn (a timer due at once).
    func scheduleNextTurn(_ callback: @escaping () -> Void) {
        _ = schedule(at: clock.now, callback)
    }

    /// Calls `callback` every `intervalNanoseconds` until it returns false or is cancelled.
    func scheduleRepeating(every intervalNanoseconds: UInt64, _ callback: @escaping () -> Bool) -> TimerHandle {
        assertInEventLoop()
        let timer = TimerHandle(
            deadline: clock.now + intervalNanoseconds, work: .repeating(every: intervalNanoseconds, callback))
        add(timer)
        return timer
    }

    /// Stops `timer`: its callback never runs again and is released now. Nothing happens for a
    /// timer that already fired (once) or was cancelled.
    func cancel(_ timer: TimerHandle) {
        assertInEventLoop()
        timers.remove(timer)
        timer.work = nil
        // The timerfd may stay armed for the cancelled deadline: it then fires once with nothing
        // due, and `runDueTimers` re-arms it for the next.
    }

    /// Asks the loop to flush `target` at the end of the current turn (once, however often asked).
    func markDirty(_ target: any Flushable) {
        assertInEventLoop()
        dirty.append(DirtyTarget(target: target, address: MemoryHint.address(of: target as AnyObject)))
    }

    private func add(_ timer: TimerHandle) {
        timers.push(timer)
        guard armsKernelTimer else {
            if timer.deadline <= clock.now { runTimersSoon() }
            return
        }
        if timer.deadline < armedDeadline {
            armedDeadline = timer.deadline
            _ = cshim_timerfd_arm_at(timerFD, max(timer.deadline, 1))
        }
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
        var order: [Int] = []
        var costs: [UInt64] = []
        Self.turnInput.value.onLoop = true
        while running {
            let count = Int(cshim_epoll_wait(epollFD, events, data, Int32(capacity), -1))
            if count < 0 { continue }
            turn &+= 1
            arrange(&order, count: count, data: data)
            let began = monotonicNow()
            turnBegan = began
            var last = began
            costs.removeAll(keepingCapacity: true)
            for i in order {
                let registration = UInt32(truncatingIfNeeded: data[i] >> 32)
                switch registration {
                case Self.wakeRegistration:
                    drainInbox()
                case Self.timerRegistration:
                    _ = cshim_timerfd_drain(timerFD)
                    runDueTimers()
                default:
                    handlers[registration]?.handleEvent(EpollEvents(rawValue: events[i]))
                }
                let now = monotonicNow()
                costs.append(now - last)
                last = now
                if costs.count < count && now - began > Self.turnBudgetNanoseconds { break }
            }
            noteTurn(order, costs: costs, data: data)
            runAfterTurnInput()
            flushDirty()
        }
        // Tasks that arrived during the last turn still run (they may release resources).
        drainInbox()
        runAfterTurnInput()
        flushDirty()
        // Nothing runs here any more: let go of timers and handlers, which may hold the loop's
        // owner (and so the loop, its epoll, eventfd and timerfd) in a cycle.
        timers = TimerHeap()
        handlers.removeAll()
    }

    /// How long a turn runs handlers before it leaves its other events to the next turn. Every
    /// registration is level-triggered, so an event left over is reported again. After a turn
    /// over budget the loop orders each turn's events until a turn stays within budget again:
    /// first the cheap ones (whose last event took under `heavyEventNanoseconds`, or never seen
    /// before: a new connection, a HELLO, a call) in the kernel's order, then the heavy ones —
    /// and those left over unmeasured — by the turn they were last handled in, oldest first (a
    /// round robin). A few connections with heavy input (each event bounded by
    /// `ServerConnection.outputPerEvent`) thus hold a fresh connection's accept, HELLO or call for
    /// about this long plus one event, and none of them waits while another runs twice.
    static let turnBudgetNanoseconds: UInt64 = 10_000_000
    /// An event that took longer marks its registration heavy (see `turnBudgetNanoseconds`).
    static let heavyEventNanoseconds: UInt64 = 1_000_000

    /// Where a registration stands while the loop orders its turns.
    private enum Standing {
        case cheap
        /// Its last event was heavy, or it was left over before it was ever measured; `turn`
        /// is when it was last handled (0: never).
        case heavy(turn: UInt64)
    }
    /// When the current turn began.
    private var turnBegan: UInt64 = 0

    /// The current turn has run past `turnBudgetNanoseconds`: work that can wait for the next
    /// turn should.
    var turnOverBudget: Bool {
        assertInEventLoop()
        return monotonicNow() - turnBegan > Self.turnBudgetNanoseconds
    }

    /// Empty unless the last turn ran over budget (no ordering work otherwise).
    private var standings: [UInt32: Standing] = [:]

    /// The order to handle a turn's `count` events in: as reported, unless the last turn ran
    /// over its budget (see `turnBudgetNanoseconds`).
    private func arrange(_ order: inout [Int], count: Int, data: UnsafeMutablePointer<UInt64>) {
        order.removeAll(keepingCapacity: true)
        order.append(contentsOf: 0..<count)
        guard !standings.isEmpty else { return }
        func key(_ i: Int) -> UInt64 {
            let registration = UInt32(truncatingIfNeeded: data[i] >> 32)
            guard case .heavy(let turn)? = standings[registration] else { return 0 }
            return turn + 1
        }
        // Stable: equal keys keep the kernel's order.
        order = order.enumerated().sorted { (key($0.element), $0.offset) < (key($1.element), $1.offset) }.map(\.element)
    }

    /// Notes, when this turn or the last ran over budget, what each event handled cost
    /// (`costs[k]` for `order[k]`) and what was left over (the events after `costs.count`).
    private func noteTurn(_ order: [Int], costs: [UInt64], data: UnsafeMutablePointer<UInt64>) {
        let overBudget = costs.count < order.count
        guard overBudget || !standings.isEmpty else { return }
        guard overBudget else {
            standings.removeAll()
            return
        }
        for (position, i) in order.enumerated() {
            let registration = UInt32(truncatingIfNeeded: data[i] >> 32)
            if position < costs.count {
                standings[registration] = costs[position] > Self.heavyEventNanoseconds ? .heavy(turn: turn) : .cheap
            } else if standings[registration] == nil {
                standings[registration] = .heavy(turn: 0)
            }
        }
    }

    private func drainInbox() {
        // Drain the eventfd before clearing the flag: the other way round, a producer that signals
        // in between has its signal drained while the flag stays set, and every later `execute`
        // skips the signal — the inbox would never wake the loop again.
        _ = cshim_eventfd_drain(wakeFD)
        wakePending.store(false, ordering: .releasing)
        let items = inbox.withLock { items in
            defer { items.removeAll(keepingCapacity: true) }
            return items
        }
        // A fan-out hands a loop thousands of ports at once, none of them in cache: each is
        // asked for a few places ahead.
        for index in items.indices {
            if index + 4 < items.count, case .task(_, let address) = items[index + 4] {
                MemoryHint.prefetch(address: address, lines: 2)
            }
            if index + 2 < items.count, case .task(let task, _) = items[index + 2] { task.prefetchReached() }
            switch items[index] {
            case .closure(let task): task()
            case .task(let task, _): task.runOnLoop()
            }
        }
    }

    private func runDueTimers() {
        let now = clock.now
        armedDeadline = .max
        while let next = timers.peekDeadline, next <= now {
            let timer = timers.popFirst()
            switch timer.work {
            case .once(let callback):
                timer.work = nil
                callback()
            case .repeating(let interval, let callback):
                // Rescheduled from its own deadline, not from now: a late turn catches up.
                if callback(), timer.work != nil {
                    timer.deadline += interval
                    timers.push(timer)
                } else {
                    timer.work = nil
                }
            case nil:
                break
            }
        }
        if armsKernelTimer, let next = timers.peekDeadline {
            armedDeadline = next
            _ = cshim_timerfd_arm_at(timerFD, next)
        }
    }

    private func flushDirty() {
        while !dirty.isEmpty {
            let batch = dirty
            dirty.removeAll(keepingCapacity: true)
            // A fan-out to one socket per subscriber leaves thousands of connections to flush,
            // none of them in cache any more: each is asked for a few places ahead, by address
            // (a reference taken would wait for it), then what it points at.
            for index in batch.indices {
                if index + 4 < batch.count { MemoryHint.prefetch(address: batch[index + 4].address, lines: 3) }
                if index + 2 < batch.count { batch[index + 2].target.prefetchReached() }
                batch[index].target.flush()
            }
        }
    }

    private static func pack(_ registration: UInt32, _ fd: Int32) -> UInt64 {
        UInt64(registration) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    /// `epoll_ctl`, its failure thrown with its errno.
    private static func control(
        _ epollFD: Int32, _ operation: Int32, _ fd: Int32, _ events: EpollEvents, _ data: UInt64,
        _ what: @autoclosure () -> String
    ) throws(SystemError) {
        guard cshim_epoll_ctl(epollFD, operation, fd, events.rawValue, data) == 0 else {
            throw SystemError(what(), errno: errno)
        }
    }
}

extension EventLoop: Wakeable {
    /// A `WakeDeferral` batch has ended: the tasks it held for this loop go into the inbox at
    /// once, and the loop is woken (on the batching thread).
    public func wake() {
        let tasks = Self.held.value.take(for: self)
        guard !tasks.isEmpty else { return }
        inbox.withLock { inbox in
            inbox.reserveCapacity(inbox.count + tasks.count)
            for task in tasks { inbox.append(.task(task)) }
        }
        wakeUnlessPending()
    }
}

/// An event loop thread's tasks waiting for its turn's input to be read (`afterTurnInput`).
private final class TurnInputTasks {
    /// The thread runs an event loop: tasks wait; elsewhere they run at once.
    var onLoop = false
    var tasks: [() -> Void] = []
}

/// The loop tasks one thread's `WakeDeferral` batch holds back, per loop (touched only by that
/// thread).
private final class HeldTasks {
    private var loops: [ObjectIdentifier] = []
    private var tasks: [[any LoopTask]] = []

    func add(_ task: any LoopTask, for loop: EventLoop) {
        let id = ObjectIdentifier(loop)
        // A server has a loop per core: a short list beats hashing.
        if let index = loops.firstIndex(of: id) {
            tasks[index].append(task)
        } else {
            loops.append(id)
            tasks.append([task])
        }
    }

    func take(for loop: EventLoop) -> [any LoopTask] {
        guard let index = loops.firstIndex(of: ObjectIdentifier(loop)) else { return [] }
        loops.remove(at: index)
        return tasks.remove(at: index)
    }
}

/// Work an event loop runs from its inbox: an object, where `execute`'s closure would be one
/// allocation per hand-over.
protocol LoopTask: AnyObject, Sendable {
    /// Runs on the loop's thread.
    func runOnLoop()
    /// A hint on the loop's thread that `runOnLoop` comes soon, once the task itself is in cache
    /// (see `Flushable.prefetchReached`). The default does nothing.
    func prefetchReached()
}

extension LoopTask {
    func prefetchReached() {}
}

/// What the loop's inbox holds, in the order it was handed over.
private enum InboxItem {
    case closure(@Sendable () -> Void)
    /// A task, and where it is in memory (for prefetching it without taking a reference).
    case task(any LoopTask, address: UnsafeRawPointer)

    static func task(_ task: any LoopTask) -> InboxItem {
        .task(task, address: MemoryHint.address(of: task as AnyObject))
    }
}

/// A connection the loop flushes at the end of its turn, and where it is in memory (for
/// prefetching it without taking a reference).
private struct DirtyTarget {
    let target: any Flushable
    let address: UnsafeRawPointer
}
