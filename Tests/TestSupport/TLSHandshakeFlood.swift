internal import CSystemShims
internal import Glibc
import Synchronization
import TLSSupport
internal import ThreadSupport

/// The cheapest flood of TLS handshakes a client can send: one ClientHello, made once, sent again
/// and again on new connections. The server pays for each in full (a key exchange and a
/// signature for its reply), the client only for a connect and a write.
///
/// Each thread connects, sends the ClientHello, waits for the first bytes of the server's reply
/// (so the server did the work) and closes, until `stop()`.
public final class TLSHandshakeFlood: Sendable {
    private let running = Atomic<Bool>(true)
    private let replies = Atomic<Int>(0)
    private let threads: Mutex<[WorkerThread]>

    /// Starts `threads` flooding 127.0.0.1:`port`.
    /// - Throws: `TestFailure` when no ClientHello can be made.
    public init(port: UInt16, threads count: Int) throws {
        let hello = try Self.clientHello()
        threads = Mutex([])
        for index in 0..<count {
            let thread = WorkerThread(name: "tls-flood-\(index)") { [self] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while running.load(ordering: .relaxed) {
                    let fd = cshim_connect("127.0.0.1", port, 2_000)
                    guard fd >= 0 else { continue }
                    _ = hello.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    if poll(&poller, 1, 2_000) > 0,
                        buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, 4096, 0) }) > 0
                    {
                        replies.add(1, ordering: .relaxed)
                    }
                    close(fd)
                }
            }
            threads.withLock { $0.append(thread) }
        }
    }

    /// Stops the flood and waits for its threads.
    /// - Returns: the handshakes the server answered.
    @discardableResult
    public func stop() -> Int {
        running.store(false, ordering: .relaxed)
        for thread in threads.withLock({ $0 }) { thread.join() }
        threads.withLock { $0.removeAll() }
        return replies.load(ordering: .relaxed)
    }

    /// The ClientHello of a TLS client that trusts nobody (it never gets as far as checking).
    private static func clientHello() throws -> [UInt8] {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw TestFailure("socketpair failed: errno \(errno)")
        }
        defer {
            close(pair[0])
            close(pair[1])
        }
        _ = cshim_set_nonblocking(pair[0], 1)
        let context = try TLSContext.client(TLSClientConfiguration(verifiesPeer: false))
        let session = try context.makeClientSession(fd: pair[0], host: "localhost")
        guard session.handshake() == .wantRead else { throw TestFailure("the TLS client did not wait for a reply") }
        var hello = [UInt8](repeating: 0, count: 16 * 1024)
        let n = hello.withUnsafeMutableBytes { recv(pair[1], $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw TestFailure("no ClientHello") }
        return Array(hello[0..<n])
    }
}
