/// Text as rules match it (NFKC, case folded, diacritics removed, every run of white space one
/// ASCII space), with the way back to the text as sent: every normalized byte knows the byte
/// range of the original it came from.
///
/// Normalization works one normalization segment at a time (a character that starts one, and the
/// combining characters that follow it), so each normalized byte maps to the whole original
/// segment it was produced from: a match's span in the original runs from the start of the
/// segment of its first byte to the end of the segment of its last byte. The space that stands
/// for a run of white space maps to the whole run, so a phrase is a literal of fixed length whose
/// span still covers the white space between its words as sent.
public struct NormalizedText: Sendable {
    /// The normalized text, always valid UTF-8 (bytes that are not UTF-8 read as U+FFFD).
    public internal(set) var bytes: [UInt8] = []
    /// For each byte of `bytes`, where its segment starts in the original text.
    var originStart: [Int32] = []
    /// For each byte of `bytes`, where its segment ends in the original text.
    var originEnd: [Int32] = []

    public init() {}

    /// The range of the original text that normalized bytes `range` come from.
    public func originalRange(of range: Range<Int>) -> Range<Int> {
        guard !range.isEmpty else {
            let position = range.lowerBound < bytes.count ? Int(originStart[range.lowerBound]) : originalEnd
            return position..<position
        }
        return Int(originStart[range.lowerBound])..<Int(originEnd[range.upperBound - 1])
    }

    /// The normalized text as a string (for tests and diagnostics).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The end of the original text as far as the normalized bytes know it.
    private var originalEnd: Int { originEnd.last.map(Int.init) ?? 0 }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        originStart.removeAll(keepingCapacity: true)
        originEnd.removeAll(keepingCapacity: true)
    }

    /// Appends an ASCII character that comes from `origin` (white space joins a run just before it).
    mutating func append(ascii byte: UInt8, from origin: Range<Int>) {
        if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
            appendSpace(from: origin)
        } else {
            appendByte(byte, from: origin)
        }
    }

    /// Appends `scalar` as UTF-8, coming from `origin` (white space joins a run just before it).
    mutating func append(scalar: UInt32, from origin: Range<Int>) {
        let value = Unicode.Scalar(scalar) ?? "\u{FFFD}"
        if WordCharacters.isSpace(value) { return appendSpace(from: origin) }
        for byte in UTF8.encode(value)! { appendByte(byte, from: origin) }
    }

    /// One space for a run of white space: the first of the run appends it, the others stretch
    /// its origin to their end (the only spaces in `bytes` are these, so the last byte tells).
    private mutating func appendSpace(from origin: Range<Int>) {
        if bytes.last == 0x20 {
            originEnd[originEnd.count - 1] = Int32(origin.upperBound)
        } else {
            appendByte(0x20, from: origin)
        }
    }

    private mutating func appendByte(_ byte: UInt8, from origin: Range<Int>) {
        bytes.append(byte)
        originStart.append(Int32(origin.lowerBound))
        originEnd.append(Int32(origin.upperBound))
    }
}

extension NormalizedText {
    /// The scalar that starts at byte `index` and its length in bytes.
    func scalar(at index: Int) -> (value: Unicode.Scalar, length: Int) {
        UTF8Decoding.scalar(in: bytes, at: index)
    }

    /// The scalar that ends at byte `index` (the one before it) and its start.
    func scalar(before index: Int) -> (value: Unicode.Scalar, start: Int) {
        var start = index - 1
        while start > 0 && bytes[start] & 0xC0 == 0x80 { start -= 1 }
        return (scalar(at: start).value, start)
    }

    /// Whether the scalar before byte `index` is a word character (false at the start).
    func isWord(before index: Int) -> Bool {
        index > 0 && WordCharacters.isWord(scalar(before: index).value)
    }

    /// Whether the scalar at byte `index` is a word character (false at the end).
    func isWord(at index: Int) -> Bool {
        index < bytes.count && WordCharacters.isWord(scalar(at: index).value)
    }
}

/// What word and domain rules count as a word character: a letter, a digit or number, or `_`
/// (Hyperscan's `\w` with Unicode properties); host names add `-`.
public enum WordCharacters {
    public static func isWord(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value
            return (value >= 0x61 && value <= 0x7A) || (value >= 0x41 && value <= 0x5A)
                || (value >= 0x30 && value <= 0x39) || value == 0x5F
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// Unicode's White_Space: each run of it is one space in the normalized text.
    public static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
            return true
        default:
            return false
        }
    }

    public static func isHost(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "-" || isWord(scalar)
    }
}

/// UTF-8 decoding that accepts any bytes: a byte that does not start a well-formed sequence
/// (truncated, overlong, a surrogate, beyond U+10FFFF) reads as U+FFFD, one byte long.
enum UTF8Decoding {
    static func scalar(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (value: Unicode.Scalar, length: Int) {
        let lead = UInt32(bytes[index])
        if lead < 0x80 { return (Unicode.Scalar(UInt8(lead)), 1) }
        let length: Int
        var value: UInt32
        let minimum: UInt32
        switch lead {
        case 0xC2...0xDF: (length, value, minimum) = (2, lead & 0x1F, 0x80)
        case 0xE0...0xEF: (length, value, minimum) = (3, lead & 0x0F, 0x800)
        case 0xF0...0xF4: (length, value, minimum) = (4, lead & 0x07, 0x10000)
        default: return ("\u{FFFD}", 1)
        }
        guard index + length <= bytes.count else { return ("\u{FFFD}", 1) }
        for offset in 1..<length {
            let byte = UInt32(bytes[index + offset])
            guard byte & 0xC0 == 0x80 else { return ("\u{FFFD}", 1) }
            value = value << 6 | (byte & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return ("\u{FFFD}", 1) }
        return (scalar, length)
    }

    static func scalar(in bytes: [UInt8], at index: Int) -> (value: Unicode.Scalar, length: Int) {
        bytes.withUnsafeBufferPointer { scalar(in: $0, at: index) }
    }
}
