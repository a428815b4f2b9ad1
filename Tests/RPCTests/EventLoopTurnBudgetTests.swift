import Glibc
import Synchronization
import TestSupport
import Testing

@testable import RPCPosix

/// A turn that runs past `EventLoop.turnBudgetNanoseconds` leaves its other events to the next
/// turn, which takes first what it had not seen, then what was left over, then what it handled.
@Suite("EventLoop: the turn budget")
struct EventLoopTurnBudgetTests {
    /// The order handlers ran in, by name.
    final class Log: Sendable {
        let names = Mutex<[String]>([])
        func add(_ name: String) { names.withLock { $0.append(name) } }
        var all: [String] { names.withLock { $0 } }
    }

    /// A pipe that stays readable (never drained), whose handler takes `busyMs` and logs its name;
    /// `onFirst` runs after its first event.
    final class Busy: EventHandler {
        let name: String
        let busyMs: Int
        let log: Log
        var onFirst: (() -> Void)?

        init(name: String, busyMs: Int, log: Log) {
            self.name = name
            self.busyMs = busyMs
            self.log = log
        }

        func handleEvent(_ events: EpollEvents) {
            log.add(name)
            if busyMs > 0 { usleep(UInt32(busyMs * 1_000)) }
            onFirst?()
            onFirst = nil
        }
    }

    /// A readable pipe: its ends.
    static func readablePipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        var byte: UInt8 = 1
        _ = write(fds[1], &byte, 1)
        return (fds[0], fds[1])
    }

    @Test("a new event waits for one slow handler, not all of them, and no slow one is skipped twice")
    func newEventsFirst() throws {
        let loop = try EventLoop(index: 0)
        loop.start(name: "budget-test")
        defer { loop.stopAndWait() }
        let log = Log()
        let heavyCount = 5
        let heavyMs = Int(EventLoop.turnBudgetNanoseconds / 1_000_000) + 5
        let heavy = (0..<heavyCount).map { _ in Self.readablePipe() }
        let light = { () -> (read: Int32, write: Int32) in
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0)
            return (fds[0], fds[1])
        }()
        defer { for fd in heavy.flatMap({ [$0.read, $0.write] }) + [light.read, light.write] { close(fd) } }
        loop.execute {
            let lightHandler = Busy(name: "light", busyMs: 0, log: log)
            _ = try? loop.register(fd: light.read, events: [.input], handler: lightHandler)
            for (index, pipe) in heavy.enumerated() {
                let handler = Busy(name: "heavy\(index)", busyMs: heavyMs, log: log)
                // The light pipe becomes readable during the first slow event of the first turn.
                handler.onFirst = {
                    var byte: UInt8 = 1
                    _ = write(light.write, &byte, 1)
                }
                _ = try? loop.register(fd: pipe.read, events: [.input], handler: handler)
            }
        }
        let enough = waitUntil(timeoutMs: 10_000, pollMs: 5) {
            log.all.filter { $0 != "light" }.count >= 2 * heavyCount
        }
        #expect(enough, "the slow handlers ran \(log.all.count) times")
        let names = log.all
        let firstLight = try #require(names.firstIndex(of: "light"), "the new event never ran: \(names)")
        #expect(firstLight <= 2, "the new event waited for \(firstLight) slow handlers: \(names)")
        let heavyOrder = names.filter { $0 != "light" }
        #expect(
            Set(heavyOrder.prefix(heavyCount)).count == heavyCount,
            "a slow handler ran twice before another ran once: \(heavyOrder)")
    }
}
