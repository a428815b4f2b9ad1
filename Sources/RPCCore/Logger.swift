internal import Glibc
import Synchronization

/// A cheap structured logger: one line per event, as text for people or JSON for machines.
///
/// Like swift-log's facade, the message is an autoclosure: a disabled level costs one comparison.
/// Fields attached with `with(_:_:)` (a connection's peer, a call's request id) appear on every
/// line logged through the returned logger. Secrets must never be passed as fields.
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case trace, debug, info, notice, warning, error

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        public var name: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// How lines are written.
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public let level: Level
    public let format: Format
    private let fields: [(String, String)]
    private let sink: LogSink

    /// A logger writing to standard error.
    public init(level: Level = .info, format: Format = .text) {
        self.init(level: level, format: format, fields: [], sink: .standardError)
    }

    /// A logger that writes nowhere (tests, benchmarks).
    public static let disabled = Logger(level: .error, format: .text, fields: [], sink: .none)

    /// A logger that keeps its lines in memory (tests).
    public static func capturing(level: Level = .trace, format: Format = .text) -> (Logger, LogCapture) {
        let capture = LogCapture()
        return (Logger(level: level, format: format, fields: [], sink: .capture(capture)), capture)
    }

    private init(level: Level, format: Format, fields: [(String, String)], sink: LogSink) {
        self.level = level
        self.format = format
        self.fields = fields
        self.sink = sink
    }

    /// The logger with one more field on every line.
    public func with(_ key: String, _ value: String) -> Logger {
        Logger(level: level, format: format, fields: fields + [(key, value)], sink: sink)
    }

    public func isEnabled(_ level: Level) -> Bool {
        if case .none = sink { return false }
        return level >= self.level
    }

    public func log(
        _ level: Level, _ message: @autoclosure () -> String, _ extra: @autoclosure () -> [(String, String)] = []
    ) {
        guard isEnabled(level) else { return }
        let line = render(level, message(), fields + extra())
        sink.write(line)
    }

    public func trace(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [(String, String)] = []) {
        log(.trace, message(), extra())
    }
    public func debug(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [(String, String)] = []) {
        log(.debug, message(), extra())
    }
    public func info(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [(String, String)] = []) {
        log(.info, message(), extra())
    }
    public func notice(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [(String, String)] = []) {
        log(.notice, message(), extra())
    }
    public func warning(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [(String, String)] = []) {
        log(.warning, message(), extra())
    }
    public func error(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [(String, String)] = []) {
        log(.error, message(), extra())
    }

    private func render(_ level: Level, _ message: String, _ fields: [(String, String)]) -> String {
        let time = Self.timestamp()
        switch format {
        case .text:
            var line = "\(time) \(level.name.uppercased()) \(message)"
            for (key, value) in fields { line += " \(key)=\(Self.quoteIfNeeded(value))" }
            return line + "\n"
        case .json:
            var line = "{\"time\":\"\(time)\",\"level\":\"\(level.name)\",\"msg\":\(Self.jsonString(message))"
            for (key, value) in fields { line += ",\(Self.jsonString(key)):\(Self.jsonString(value))" }
            return line + "}\n"
        }
    }

    /// UTC time as 2026-11-29T11:30:00.123Z.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }

    static func quoteIfNeeded(_ value: String) -> String {
        value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\n" })
            ? jsonString(value) : value
    }

    /// `value` as a JSON string literal.
    public static func jsonString(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Where log lines go.
enum LogSink: Sendable {
    case standardError
    case none
    case capture(LogCapture)

    func write(_ line: String) {
        switch self {
        case .standardError:
            var line = line
            line.withUTF8 { bytes in _ = Glibc.write(2, bytes.baseAddress, bytes.count) }
        case .none:
            break
        case .capture(let capture):
            capture.append(line)
        }
    }
}

/// Lines kept by a capturing logger.
public final class LogCapture: Sendable {
    private let storage = Mutex<[String]>([])

    public var lines: [String] { storage.withLock { $0 } }

    func append(_ line: String) { storage.withLock { $0.append(line) } }
}
