import RPCCore

/// Writes one log line straight into memory a `LineBuffer` has made room for: no `String`, no
/// array growth, no check per byte beyond the scans that quoting needs.
///
/// The caller reserves the line's largest possible size (`LineWriter.maximumBytes(…)`) before it
/// writes; every write below stays within it.
struct LineWriter {
    private let base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private let capacity: Int

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The most bytes a value of `utf8Count` bytes takes once escaped (`\u00XX` for a control byte).
    static func escapedBytes(_ utf8Count: Int) -> Int { 6 * utf8Count + 2 }

    @inline(__always)
    mutating func write(_ literal: StaticString) {
        literal.withUTF8Buffer { write($0) }
    }

    @inline(__always)
    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        assert(count + bytes.count <= capacity, "a log line outgrew the room made for it")
        guard let source = bytes.baseAddress else { return }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func write(byte: UInt8) {
        assert(count < capacity, "a log line outgrew the room made for it")
        base[count] = byte
        count += 1
    }

    /// `value` in decimal.
    mutating func write(decimal value: UInt64) {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        assert(count + digits <= capacity, "a log line outgrew the room made for it")
        var position = count + digits
        rest = value
        repeat {
            position -= 1
            base[position] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
            rest /= 10
        } while rest > 0
        count += digits
    }

    /// `value` (0–999) as three digits.
    mutating func write(threeDigits value: Int) {
        write(byte: UInt8(truncatingIfNeeded: 0x30 + value / 100))
        write(byte: UInt8(truncatingIfNeeded: 0x30 + value / 10 % 10))
        write(byte: UInt8(truncatingIfNeeded: 0x30 + value % 10))
    }

    /// A duration in milliseconds with three decimals, as `LogMilliseconds` writes it.
    mutating func write(milliseconds nanoseconds: UInt64) {
        let micros = nanoseconds / 1_000
        write(decimal: micros / 1_000)
        write(byte: UInt8(ascii: "."))
        write(threeDigits: Int(micros % 1_000))
    }

    /// A value of the text format: as it is, or as a JSON string when empty or holding a space, a
    /// quote, `=` or a newline (what `Logger` does).
    mutating func write(textValue value: String) {
        let plain =
            value.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                guard !bytes.isEmpty else { return false }
                for byte in bytes where byte == 0x20 || byte == 0x22 || byte == 0x3D || byte == 0x0A { return false }
                write(bytes)
                return true
            } ?? false
        if !plain { write(jsonString: value) }
    }

    /// `value` as a JSON string literal.
    mutating func write(jsonString value: String) {
        let done =
            value.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C { return false }
                write(byte: UInt8(ascii: "\""))
                write(bytes)
                write(byte: UInt8(ascii: "\""))
                return true
            } ?? false
        if !done {
            // Something to escape (rare): `Logger`'s own escaping.
            var escaped = Logger.jsonString(value)
            escaped.withUTF8 { write($0) }
        }
    }
}
