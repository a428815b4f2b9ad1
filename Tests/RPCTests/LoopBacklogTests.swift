import RPCCore
import Testing
import ThreadSupport

@testable import RPCPosix

/// A connection's port counts as behind while its queue for the loop holds more than
/// `LoopBacklog.threshold` bytes, and stops counting once the loop has taken the queue: what the
/// event hub's fan-out waits on between two actions.
@Suite("LoopBacklog: ports whose loop has not taken their frames")
struct LoopBacklogTests {
    /// A message body of `bytes` bytes.
    static func body(_ bytes: Int) -> [UInt8] { [UInt8](repeating: 7, count: bytes) }

    @Test(
        "a port is behind past the threshold, not before, and no longer once its loop took the queue",
        arguments: [
            (messages: 1, bytes: 1_000, behind: false),
            (messages: 4, bytes: LoopBacklog.threshold / 4 - 100, behind: false),
            (messages: 4, bytes: LoopBacklog.threshold / 4 + 100, behind: true),
            (messages: 300, bytes: 1_000, behind: true),
        ])
    func behindUntilTaken(messages: Int, bytes: Int, behind: Bool) throws {
        let loop = try EventLoop(index: 0) // not started yet: nothing takes the port's queue
        let port = ConnectionPort(loop: loop)
        for _ in 0..<messages { port.sendMessage(streamID: 1, body: Self.body(bytes)) }
        #expect(port.isBehind == behind)
        // Other tests' ports may count too, so only "at least ours" holds for the process's count.
        if behind { #expect(LoopBacklog.isBehind) }
        loop.start(name: "backlog-test")
        defer { loop.stopAndWait() }
        // The loop runs its tasks in order: the port's (queued above) before this one.
        let taken = BlockingSemaphore()
        loop.execute { taken.signal() }
        taken.wait()
        #expect(port.pendingBytes == 0)
        #expect(!port.isBehind)
    }
}
