internal import CSystemShims
internal import Glibc
import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TLSSupport

/// One client thread: its connections on one epoll.
final class LoadThread<Connection: LoadTransport>: @unchecked Sendable {
    // Invariant: used by exactly one thread after construction.
    private let connections: [Connection]
    private let payloads: [[UInt8]]
    private let depth: Int
    private let interval: UInt64?
    private let shared: SharedRun
    private var result = LoadThreadResult()

    init(
        connections: [Connection], payloads: [[UInt8]], depth: Int, interval: UInt64?, shared: SharedRun
    ) {
        self.connections = connections
        self.payloads = payloads
        self.depth = depth
        self.interval = interval
        self.shared = shared
    }

    func run() -> LoadThreadResult {
        let epoll = cshim_epoll_create()
        defer { close(epoll) }
        let now = monotonicNow()
        for (index, connection) in connections.enumerated() {
            _ = cshim_set_nonblocking(connection.fd, 1)
            _ = cshim_epoll_ctl(epoll, EPOLL_CTL_ADD, connection.fd, EpollEvents.input.rawValue, UInt64(index))
            connection.nextSend = now
            fill(connection, now: now)
            connection.flush()
        }
        let events = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        let data = UnsafeMutablePointer<UInt64>.allocate(capacity: 64)
        defer {
            events.deallocate()
            data.deallocate()
        }
        let readable: EpollEvents = [.input, .error, .hangUp]
        var open = connections.count
        while open > 0 {
            // Over, or nothing left to send: stop once this thread's calls are in.
            if shared.isOver || shared.allSent, connections.allSatisfy({ $0.inFlight == 0 || $0.closed }) { break }
            let timeout: Int32 = interval == nil ? 100 : 1
            let count = cshim_epoll_wait(epoll, events, data, 64, timeout)
            let now = monotonicNow()
            if shared.isOver && now > shared.measureStop + 2_000_000_000 { break } // stragglers
            for i in 0..<Int(max(count, 0)) {
                let connection = connections[Int(data[i])]
                guard !connection.closed else { continue }
                if !EpollEvents(rawValue: events[i]).isDisjoint(with: readable) {
                    if !read(connection) {
                        connection.closed = true
                        open -= 1
                        _ = cshim_epoll_ctl(epoll, EPOLL_CTL_DEL, connection.fd, 0, 0)
                        continue
                    }
                }
            }
            for (index, connection) in connections.enumerated() where !connection.closed {
                if interval != nil { fill(connection, now: now) }
                let wasBlocked = connection.writeBlocked || connection.readNeedsOutput
                connection.flush()
                if connection.readNeedsOutput, !read(connection) {
                    connection.closed = true
                    open -= 1
                    _ = cshim_epoll_ctl(epoll, EPOLL_CTL_DEL, connection.fd, 0, 0)
                    continue
                }
                let blocked = connection.writeBlocked || connection.readNeedsOutput
                if blocked != wasBlocked {
                    // Wait for writability only while a write is unfinished (level-triggered).
                    let events: EpollEvents = blocked ? [.input, .output] : .input
                    _ = cshim_epoll_ctl(epoll, EPOLL_CTL_MOD, connection.fd, events.rawValue, UInt64(index))
                }
            }
        }
        for connection in connections { close(connection.fd) }
        return result
    }

    /// Reads everything available and answers each reply; false when the connection is gone.
    private func read(_ connection: Connection) -> Bool {
        let end = connection.readReplies(
            completed: { sent, now, outcome in
                let (measured, _) = shared.complete(at: now)
                if measured {
                    result.latency.record(nanoseconds: now - sent)
                    result.outcomes[outcome(), default: 0] += 1
                }
                if !shared.isOver && interval == nil { issue(connection, now: now) }
            },
            notice: { result.errors.append($0) })
        guard case .ended(let reason) = end else { return true }
        if !shared.isOver { result.errors.append(reason) }
        return false
    }

    private func fill(_ connection: Connection, now: UInt64) {
        while connection.inFlight < depth && !shared.isOver {
            if let interval {
                guard now >= connection.nextSend else { return }
                connection.nextSend += interval
            }
            guard issue(connection, now: now) else { return }
        }
    }

    /// Sends the next request on `connection`; false when there is none left to send.
    @discardableResult
    private func issue(_ connection: Connection, now: UInt64) -> Bool {
        guard let number = shared.nextRequest(at: now) else { return false }
        connection.appendCall(payload: payloads[number % payloads.count], now: now)
        return true
    }
}

/// What one thread measured, merged into the report after the run.
struct LoadThreadResult: Sendable {
    var latency = LatencyHistogram()
    var outcomes: [String: UInt64] = [:]
    var errors: [String] = []
}
