internal import Glibc

/// One scrape of a server's `/metrics`, read as Prometheus reads the text format: each sample
/// line by its series (name and labels as written), each family's `# TYPE`.
public struct MetricsScrape: Sendable {
    /// The body as served.
    public let text: String
    /// Each sample's value by its series, e.g. `mrpc_handshakes_refused_total{listener="mrpc",reason="bad_key"}`.
    public let values: [String: Double]
    /// Each family's type (`counter`, `gauge`, `histogram`) by its name.
    public let types: [String: String]

    /// GETs `http://127.0.0.1:port/metrics`.
    /// - Throws: `TestFailure` when the endpoint does not answer 200 within 5 s.
    public init(port: UInt16) throws {
        let connection = try RawConnection(port: port)
        try connection.send(Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = Clock.nowMs + 5_000
        while Clock.nowMs < deadline {
            var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(1, deadline - Clock.nowMs))) > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            guard n > 0 else { break }
            response += chunk[0..<n]
        }
        let whole = String(decoding: response, as: UTF8.self)
        let end = Array("\r\n\r\n".utf8)
        guard whole.hasPrefix("HTTP/1.1 200 "),
            let split = response.indices.first(where: { response[$0...].starts(with: end) })
        else {
            throw TestFailure("GET /metrics on port \(port) answered: \(whole.prefix(200))")
        }
        self.init(text: String(decoding: response[(split + 4)...], as: UTF8.self))
    }

    /// Reads `text` in the exposition format.
    public init(text: String) {
        self.text = text
        var values: [String: Double] = [:]
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
            } else if !line.hasPrefix("#"), let space = line.lastIndex(of: " ") {
                values[String(line[..<space])] = Double(line[line.index(after: space)...])
            }
        }
        self.values = values
        self.types = types
    }

    /// The value of `series`, or 0 when the scrape does not have it (a counter not yet shown).
    public subscript(series: String) -> Double { values[series] ?? 0 }
}

extension ModerationServerProcess {
    /// The port of `--metrics-listen`, from the "metrics served" log line.
    /// - Throws: `TestFailure` when the log has no such line within 5 s.
    public func metricsPort() throws -> UInt16 {
        let marker = "http://127.0.0.1:"
        var port: UInt16?
        _ = waitUntil(timeoutMs: 5_000) {
            let text = log
            guard
                let field = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first(where: { $0.contains(marker) }
                ),
                let start = field.firstIndex(of: "h")
            else { return false }
            port = UInt16(field[start...].dropFirst(marker.count).prefix(while: \.isNumber))
            return port != nil
        }
        guard let port else { throw TestFailure("the server logged no metrics address; its log:\n\(log)") }
        return port
    }
}
