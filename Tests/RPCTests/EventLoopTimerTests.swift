import Glibc
import Synchronization
import TestSupport
import Testing

@testable import RPCPosix

/// The event loop's timers (order, cancellation, repetition), its checked `epoll_ctl`, and the
/// debug check that loop-owned state is touched only on the loop's thread.
@Suite("EventLoop: timers, registrations, loop confinement")
struct EventLoopTimerTests {
    /// What happened on the loop, for the test to check once the loop is done (an `#expect` on
    /// the loop's thread would not be attributed to the test).
    final class Record: Sendable {
        let events = Mutex<[String]>([])
        let done = Atomic<Bool>(false)

        func add(_ event: String) { events.withLock { $0.append(event) } }
        /// Records `failure` unless `condition` holds.
        func check(_ condition: Bool, _ failure: String) { if !condition { add(failure) } }
        var all: [String] { events.withLock { $0 } }
    }

    /// An object whose release a test watches for.
    final class Token {}

    /// Box for a timer's own handle, so its callback can cancel it.
    final class TimerBox {
        var timer: TimerHandle?
    }

    final class NoHandler: EventHandler {
        func handleEvent(_ events: EpollEvents) {}
    }

    /// Runs `body` on a fresh loop's thread and waits until it sets `record.done`.
    private func onLoop(_ body: @escaping @Sendable (EventLoop, Record) -> Void) throws -> Record {
        let loop = try EventLoop(index: 0)
        loop.start(name: "timer-test")
        defer { loop.stopAndWait() }
        let record = Record()
        loop.execute { body(loop, record) }
        #expect(
            waitUntil(timeoutMs: 5_000, pollMs: 1) { record.done.load(ordering: .acquiring) },
            "the loop did not finish the test")
        return record
    }

    private static let millisecond: UInt64 = 1_000_000

    @Test("timers fire by deadline, equal deadlines in the order they were scheduled")
    func order() throws {
        let record = try onLoop { loop, record in
            let start = monotonicNow()
            _ = loop.schedule(at: start + 30 * Self.millisecond) { record.add("c") }
            _ = loop.schedule(at: start + 10 * Self.millisecond) { record.add("a") }
            _ = loop.schedule(at: start + 20 * Self.millisecond) { record.add("b1") }
            _ = loop.schedule(at: start + 20 * Self.millisecond) { record.add("b2") }
            _ = loop.schedule(at: start + 40 * Self.millisecond) { record.done.store(true, ordering: .releasing) }
        }
        #expect(record.all == ["a", "b1", "b2", "c"])
    }

    @Test("a cancelled timer never fires, and what its callback captured is released at once")
    func cancel() throws {
        let record = try onLoop { loop, record in
            let start = monotonicNow()
            weak var watched: Token?
            let first: TimerHandle
            do {
                let token = Token()
                watched = token
                first = loop.schedule(at: start + 10 * Self.millisecond) {
                    _ = token
                    record.add("cancelled timer fired")
                }
            }
            let second = loop.schedule(at: start + 10 * Self.millisecond) { record.add("kept") }
            let third = loop.schedule(at: start + 5 * Self.millisecond) { record.add("earliest") }
            record.check(first.isPending && second.isPending && third.isPending, "a scheduled timer is not pending")
            record.check(watched != nil, "nothing holds the callback's capture")
            loop.cancel(first)
            record.check(!first.isPending, "a cancelled timer is still pending")
            record.check(watched == nil, "the cancelled callback still holds what it captured")
            loop.cancel(first) // a second cancel does nothing
            _ = loop.schedule(at: start + 30 * Self.millisecond) {
                record.check(!third.isPending, "a fired timer is still pending")
                loop.cancel(third) // cancelling a fired timer does nothing
                record.done.store(true, ordering: .releasing)
            }
        }
        #expect(record.all == ["earliest", "kept"])
    }

    @Test("a repeating timer runs until it is cancelled, also from its own callback")
    func repeating() throws {
        let record = try onLoop { loop, record in
            let box = TimerBox()
            var runs = 0
            box.timer = loop.scheduleRepeating(every: 2 * Self.millisecond) {
                runs += 1
                record.add("run \(runs)")
                if runs == 3, let timer = box.timer { loop.cancel(timer) }
                return true
            }
            // Long after: the cancelled timer has not run a fourth time.
            _ = loop.schedule(at: monotonicNow() + 60 * Self.millisecond) {
                record.check(box.timer?.isPending == false, "the cancelled repeating timer is still pending")
                record.done.store(true, ordering: .releasing)
            }
        }
        #expect(record.all == ["run 1", "run 2", "run 3"])
    }

    @Test("a repeating timer whose callback returns false stops")
    func repeatingUntilFalse() throws {
        let record = try onLoop { loop, record in
            var runs = 0
            let timer = loop.scheduleRepeating(every: 2 * Self.millisecond) {
                runs += 1
                record.add("run \(runs)")
                return runs < 2
            }
            _ = loop.schedule(at: monotonicNow() + 40 * Self.millisecond) {
                record.check(!timer.isPending, "the finished repeating timer is still pending")
                record.done.store(true, ordering: .releasing)
            }
        }
        #expect(record.all == ["run 1", "run 2"])
    }

    @Test("a refused epoll_ctl is thrown with its errno, and nothing stays registered")
    func checkedControl() throws {
        let record = try onLoop { loop, record in
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else {
                record.add("pipe failed")
                record.done.store(true, ordering: .releasing)
                return
            }
            defer {
                close(fds[0])
                close(fds[1])
            }
            do throws(SystemError) {
                _ = try loop.register(fd: -1, events: .input, handler: NoHandler())
                record.add("registered fd -1")
            } catch {
                record.add("register: errno \(error.errno)")
            }
            do throws(SystemError) {
                try loop.modify(fd: fds[0], registration: 1, events: .input)
                record.add("modified an unregistered fd")
            } catch {
                record.add("modify: errno \(error.errno)")
            }
            do throws(SystemError) {
                let registration = try loop.register(fd: fds[0], events: .input, handler: NoHandler())
                try loop.deregister(fd: fds[0], registration: registration)
                try loop.deregister(fd: fds[0], registration: registration)
                record.add("deregistered twice")
            } catch {
                record.add("deregister: errno \(error.errno)")
            }
            record.done.store(true, ordering: .releasing)
        }
        #expect(record.all == ["register: errno \(EBADF)", "modify: errno \(ENOENT)", "deregister: errno \(ENOENT)"])
    }

    @Test("epoll bits combine as a set with Linux's values")
    func epollBits() {
        let events: EpollEvents = [.input, .readHangUp]
        #expect(events.rawValue == 0x2001)
        #expect(!events.contains(.output))
        #expect(!events.isDisjoint(with: [.input, .error]))
        #expect(EpollEvents.exclusive.rawValue == 1 << 28)
    }

    #if DEBUG
        @Test("loop-owned state touched off the loop's thread traps in a debug build")
        func offLoopTraps() async {
            await #expect(processExitsWith: .failure) {
                let loop = try EventLoop(index: 0)
                _ = loop.schedule(at: 0) {}
            }
        }
    #endif
}
