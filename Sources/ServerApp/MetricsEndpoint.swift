internal import CSystemShims
internal import Glibc
import RPCPosix
import ThreadSupport

/// The optional HTTP listener (`--metrics-listen`) that serves `/metrics` in Prometheus' text
/// format (and `/healthz` for simple probes).
///
/// One thread, one request per connection, a 2-second read timeout: scrapes are rare, small and
/// trusted to be on an operator's network, so this is deliberately not an HTTP server.
final class MetricsEndpoint: Sendable {
    private let fd: Int32
    let port: UInt16

    /// Binds `host:port`; `render` produces the metrics text and `healthy` the /healthz answer.
    init(host: String, port: UInt16, render: @escaping @Sendable () -> String, healthy: @escaping @Sendable () -> Bool)
        throws(SystemError)
    {
        var bound: UInt16 = 0
        let fd = host.withCString { cshim_listen($0, port, 64, 0, 0, &bound) }
        guard fd >= 0 else { throw SystemError("listen for metrics on \(host):\(port)", errno: -fd) }
        self.fd = fd
        self.port = bound
        // Ends when `stop` shuts the socket down and accept fails.
        WorkerThread.detached(name: "metrics") {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Self.serve(client, render: render, healthy: healthy)
                close(client)
            }
        }
    }

    /// Stops accepting scrapes.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    private static func serve(_ client: Int32, render: @Sendable () -> String, healthy: @Sendable () -> Bool) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while request.count < 16 * 1024 {
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { break }
            request += chunk[0..<n]
            if request.count >= 4, request.suffix(4) == [13, 10, 13, 10] { break }
        }
        let line = String(decoding: request.prefix(while: { $0 != 13 && $0 != 10 }), as: UTF8.self)
        let parts = line.split(separator: " ")
        let path = parts.count >= 2 ? String(parts[1].split(separator: "?").first ?? "") : ""
        let (status, type, body): (String, String, String)
        if parts.first != "GET" {
            (status, type, body) = ("405 Method Not Allowed", "text/plain", "only GET\n")
        } else if path == "/metrics" {
            (status, type, body) = ("200 OK", "text/plain; version=0.0.4; charset=utf-8", render())
        } else if path == "/healthz" {
            (status, type, body) =
                healthy() ? ("200 OK", "text/plain", "ok\n") : ("503 Service Unavailable", "text/plain", "draining\n")
        } else {
            (status, type, body) = ("404 Not Found", "text/plain", "try /metrics\n")
        }
        var response =
            "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        response.withUTF8 { bytes in
            var sent = 0
            while sent < bytes.count {
                let n = send(client, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                if n <= 0 { return }
                sent += n
            }
        }
    }
}
