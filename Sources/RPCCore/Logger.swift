internal import Glibc
import Synchronization

/// A cheap structured logger: one line per event, as text for people or JSON for machines.
///
/// Like swift-log's facade, the message is an autoclosure: a disabled level costs one comparison.
/// Fields attached with `with(_:_:)` (a connection's peer, a call's request id) appear on every
/// line logged through the returned logger. Field values keep their type: numbers and booleans
/// are JSON numbers and booleans in the JSON format (log tools read them as such). Secrets must
/// never be passed as fields.
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

    /// One `key=value` of a line.
    public typealias Field = (String, any LogValue)

    public let level: Level
    public let format: Format
    /// Where the lines go; nil for a logger that writes nowhere.
    public let output: (any LogOutput)?
    private let fields: [Field]

    /// A logger writing to `output` (standard error unless told otherwise).
    public init(level: Level = .info, format: Format = .text, output: any LogOutput = StandardErrorOutput()) {
        self.init(level: level, format: format, fields: [], output: output)
    }

    /// A logger that writes nowhere (tests, benchmarks).
    public static let disabled = Logger(level: .error, format: .text, fields: [], output: nil)

    /// A logger that keeps its lines in memory (tests).
    public static func capturing(level: Level = .trace, format: Format = .text) -> (Logger, LogCapture) {
        let capture = LogCapture()
        return (Logger(level: level, format: format, fields: [], output: capture), capture)
    }

    private init(level: Level, format: Format, fields: [Field], output: (any LogOutput)?) {
        self.level = level
        self.format = format
        self.fields = fields
        self.output = output
    }

    /// The logger with one more field on every line.
    public func with(_ key: String, _ value: any LogValue) -> Logger {
        Logger(level: level, format: format, fields: fields + [(key, value)], output: output)
    }

    public func isEnabled(_ level: Level) -> Bool {
        output != nil && level >= self.level
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String, _ extra: @autoclosure () -> [Field] = []) {
        guard isEnabled(level), let output else { return }
        output.write(Array(render(level, message(), fields + extra()).utf8))
    }

    public func trace(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [Field] = []) {
        log(.trace, message(), extra())
    }
    public func debug(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [Field] = []) {
        log(.debug, message(), extra())
    }
    public func info(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [Field] = []) {
        log(.info, message(), extra())
    }
    public func notice(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [Field] = []) {
        log(.notice, message(), extra())
    }
    public func warning(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [Field] = []) {
        log(.warning, message(), extra())
    }
    public func error(_ message: @autoclosure () -> String, _ extra: @autoclosure () -> [Field] = []) {
        log(.error, message(), extra())
    }

    /// One line as this logger writes it, newline included.
    public func render(_ level: Level, _ message: String, _ fields: [Field]) -> String {
        let time = Self.timestamp()
        switch format {
        case .text:
            var line = "\(time) \(level.name.uppercased()) \(message)"
            for (key, value) in fields { line += " \(key)=\(Self.quoteIfNeeded(value.logText))" }
            return line + "\n"
        case .json:
            var line = "{\"time\":\"\(time)\",\"level\":\"\(level.name)\",\"msg\":\(Self.jsonString(message))"
            for (key, value) in fields { line += ",\(Self.jsonString(key)):\(value.logJSON)" }
            return line + "}\n"
        }
    }

    /// UTC time as 2026-11-29T11:30:00.123Z.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var bytes: [UInt8] = []
        LogTime.appendUTC(seconds: now.tv_sec, milliseconds: Int(now.tv_nsec / 1_000_000), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
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

/// A field's value: text as it is in the text format, and its JSON form (a string, a number or a
/// boolean), so that log tools read numbers as numbers.
public protocol LogValue: Sendable {
    /// The value in the text format, before quoting.
    var logText: String { get }
    /// The value as a JSON literal.
    var logJSON: String { get }
}

extension String: LogValue {
    public var logText: String { self }
    public var logJSON: String { Logger.jsonString(self) }
}

extension Bool: LogValue {
    public var logText: String { self ? "true" : "false" }
    public var logJSON: String { logText }
}

extension LogValue where Self: BinaryInteger {
    public var logText: String { String(self) }
    public var logJSON: String { String(self) }
}

extension Int: LogValue {}
extension Int32: LogValue {}
extension Int64: LogValue {}
extension UInt16: LogValue {}
extension UInt32: LogValue {}
extension UInt64: LogValue {}

/// A duration in milliseconds with three decimals (`1.204`): a JSON number.
public struct LogMilliseconds: LogValue {
    public let nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    public var logText: String {
        var bytes: [UInt8] = []
        Self.append(nanoseconds: nanoseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public var logJSON: String { logText }

    /// Appends `nanoseconds` as milliseconds with three decimals.
    @inlinable
    public static func append(nanoseconds: UInt64, to bytes: inout [UInt8]) {
        let micros = nanoseconds / 1_000
        LogDigits.append(micros / 1_000, to: &bytes)
        let fraction = micros % 1_000
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(truncatingIfNeeded: 0x30 + fraction / 100))
        bytes.append(UInt8(truncatingIfNeeded: 0x30 + fraction / 10 % 10))
        bytes.append(UInt8(truncatingIfNeeded: 0x30 + fraction % 10))
    }
}

/// Decimal digits straight into a byte buffer (no `String` on the way).
public enum LogDigits {
    @inlinable
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor *= 10 }
        var rest = value
        while true {
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + rest / divisor))
            rest %= divisor
            if divisor == 1 { return }
            divisor /= 10
        }
    }

    /// `value` (not negative) with at least `width` digits, zeros in front.
    @inlinable
    public static func append(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        var padded = 1
        for _ in 1..<width { padded *= 10 }
        while padded > 1, value < padded {
            bytes.append(UInt8(ascii: "0"))
            padded /= 10
        }
        append(UInt64(value), to: &bytes)
    }
}

/// Wall-clock times as log lines show them: `2026-11-29T11:30:00.123Z`.
public enum LogTime {
    /// Appends the UTC time of `seconds` since the epoch plus `milliseconds`.
    public static func appendUTC(seconds: Int, milliseconds: Int, to bytes: inout [UInt8]) {
        appendUTCSecond(seconds, to: &bytes)
        LogDigits.append(milliseconds, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Appends `2026-11-29T11:30:00.` for `seconds` since the epoch: the part of a timestamp
    /// that changes once a second, which hot paths cache.
    public static func appendUTCSecond(_ seconds: Int, to bytes: inout [UInt8]) {
        var time = seconds
        var parts = tm()
        gmtime_r(&time, &parts)
        LogDigits.append(Int(parts.tm_year) + 1900, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        LogDigits.append(Int(parts.tm_mon) + 1, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        LogDigits.append(Int(parts.tm_mday), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        LogDigits.append(Int(parts.tm_hour), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        LogDigits.append(Int(parts.tm_min), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        LogDigits.append(Int(parts.tm_sec), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
    }
}

/// Where log lines go: whole lines, newline included, one or several at once.
///
/// Called from any thread.
public protocol LogOutput: Sendable {
    func write(_ lines: [UInt8])
}

/// Lines written to standard error as they come, by the thread that logs them.
public struct StandardErrorOutput: LogOutput {
    public init() {}

    public func write(_ lines: [UInt8]) {
        FileOutput.writeAll(lines, to: 2)
    }
}

/// Writing whole buffers to a descriptor.
public enum FileOutput {
    /// Writes all of `bytes` to `descriptor`, again after a short write or EINTR; gives up on
    /// any other error (a closed standard error has nowhere to report to).
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

/// Lines kept by a capturing logger.
public final class LogCapture: LogOutput {
    private let storage = Mutex<[String]>([])

    public init() {}

    public var lines: [String] { storage.withLock { $0 } }

    public func write(_ lines: [UInt8]) {
        var parts = lines.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true { parts.removeLast() }
        let text = parts.map { String(decoding: $0, as: UTF8.self) + "\n" }
        storage.withLock { $0.append(contentsOf: text) }
    }
}
