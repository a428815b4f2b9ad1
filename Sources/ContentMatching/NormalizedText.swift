/// Text as rules match it (NFKC, case folded, diacritics removed, every run of white space one
/// ASCII space), with the way back to the text as sent: every normalized byte knows the byte
/// range of the original it came from.
///
/// Normalization works one normalization segment at a time (a character that starts one, and the
/// combining characters that follow it), so each normalized byte maps to the whole original
/// segment it was produced from (an ASCII character is a segment of its own, copied): a match's span in the original runs from the start of the
/// segment of its first byte to the end of the segment of its last byte. The space that stands
/// for a run of white space maps to the whole run, so a phrase is a literal of fixed length whose
/// span still covers the white space between its words as sent.
public struct NormalizedText: Sendable {
    /// The normalized text, always valid UTF-8 (bytes that are not UTF-8 read as U+FFFD).
    public internal(set) var bytes: [UInt8] = []
    /// Where the stretches of `bytes` come from, in order: most text is ASCII copied byte for
    /// byte (lowered), one stretch for a whole run of it, so a text costs a few entries rather
    /// than two per byte, and a match's origin is looked up only when there is a match.
    private var pieces: [Piece] = []

    /// A stretch of `bytes` from `start` to the next piece's start (or the end).
    private struct Piece: Sendable {
        var start: Int32
        /// Copied: byte `start + k` comes from original byte `originStart + k`. Produced (by
        /// normalization, or the space of a white-space run): every byte comes from the whole
        /// original range `originStart..<originEnd`.
        var originStart: Int32
        var originEnd: Int32
        var copied: Bool
    }

    public init() {}

    /// The range of the original text that normalized bytes `range` come from.
    public func originalRange(of range: Range<Int>) -> Range<Int> {
        guard !range.isEmpty else {
            let position = range.lowerBound < bytes.count ? origin(of: range.lowerBound).lowerBound : originalEnd
            return position..<position
        }
        return origin(of: range.lowerBound).lowerBound..<origin(of: range.upperBound - 1).upperBound
    }

    /// The normalized text as a string (for tests and diagnostics).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The original bytes normalized byte `index` comes from.
    private func origin(of index: Int) -> Range<Int> { Self.origin(of: index, in: pieces) }

    private static func origin(of index: Int, in pieces: [Piece]) -> Range<Int> {
        var low = 0
        var high = pieces.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if Int(pieces[middle].start) <= index { low = middle } else { high = middle - 1 }
        }
        let piece = pieces[low]
        guard piece.copied else { return Int(piece.originStart)..<Int(piece.originEnd) }
        let position = Int(piece.originStart) + index - Int(piece.start)
        return position..<position + 1
    }

    /// The end of the original text as far as the normalized bytes know it.
    private var originalEnd: Int {
        guard let last = pieces.last else { return 0 }
        return last.copied ? Int(last.originStart) + bytes.count - Int(last.start) : Int(last.originEnd)
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        pieces.removeAll(keepingCapacity: true)
    }

    /// Appends the ASCII bytes `text[range]` lowered, each coming from itself, white-space runs as
    /// one space — the common case, so copied in bulk and then lowered in place through a
    /// pointer (per-byte array writes cost 40 instructions a byte); the bytes are lowered again
    /// where white space must be closed up, which changes nothing.
    mutating func appendLowered(ascii text: UnsafeBufferPointer<UInt8>, lowered range: Range<Int>) {
        let base = bytes.count
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[range]))
        // Whether the copied piece that ends the text now continues with the next original byte.
        var continuing =
            pieces.last.map { $0.copied && Int($0.originStart) + base - Int($0.start) == range.lowerBound } ?? false
        // Most runs have only single spaces: lowered in one tight pass, they are one copied piece.
        let regular = bytes.withUnsafeMutableBufferPointer { bytes -> Bool in
            var previousSpace = base > 0 && bytes[base - 1] == 0x20
            var irregular = false
            for index in base..<bytes.count {
                let byte = bytes[index]
                let space = byte == 0x20
                irregular = irregular || (space && previousSpace) || (byte &- 0x09 < 5)
                previousSpace = space
                bytes[index] = byte &+ (byte &- 0x41 < 26 ? 0x20 : 0)
            }
            return !irregular
        }
        if regular {
            if !continuing {
                pieces.append(
                    Piece(start: Int32(base), originStart: Int32(range.lowerBound), originEnd: 0, copied: true))
            }
            return
        }
        var pieces = self.pieces
        self.pieces = []
        let written = bytes.withUnsafeMutableBufferPointer { bytes -> Int in
            var written = base
            for index in range {
                let byte = bytes[base + index - range.lowerBound]
                let isSpace = byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
                if isSpace && written > 0 && bytes[written - 1] == 0x20 {
                    // The run goes on: its one space now comes from here too.
                    Self.stretchSpace(at: written - 1, to: index + 1, in: &pieces)
                    continuing = false
                } else if isSpace && byte != 0x20 {
                    // A run starting with another white-space character: one space, produced.
                    bytes[written] = 0x20
                    pieces.append(
                        Piece(
                            start: Int32(written), originStart: Int32(index), originEnd: Int32(index + 1), copied: false
                        ))
                    written += 1
                    continuing = false
                } else {
                    bytes[written] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
                    if !continuing {
                        pieces.append(
                            Piece(start: Int32(written), originStart: Int32(index), originEnd: 0, copied: true))
                        continuing = true
                    }
                    written += 1
                }
            }
            return written
        }
        self.pieces = pieces
        if bytes.count > written { bytes.removeLast(bytes.count - written) }
    }

    /// Appends `scalar` as UTF-8, coming from `origin` (white space joins a run just before it).
    mutating func append(scalar: UInt32, from origin: Range<Int>) {
        let value = Unicode.Scalar(scalar) ?? "\u{FFFD}"
        if WordCharacters.isSpace(value) {
            if bytes.last == 0x20 {
                Self.stretchSpace(at: bytes.count - 1, to: origin.upperBound, in: &pieces)
            } else {
                appendProduced(0x20, from: origin, alone: true)
            }
            return
        }
        for byte in UTF8.encode(value)! { appendProduced(byte, from: origin, alone: false) }
    }

    /// Appends a byte produced from `origin`: into the last piece when that is produced from the
    /// same origin (and not a space, whose origin may still grow), else as a piece of its own.
    private mutating func appendProduced(_ byte: UInt8, from origin: Range<Int>, alone: Bool) {
        let last = pieces.last
        let joins =
            !alone
            && last.map {
                !$0.copied && Int($0.originStart) == origin.lowerBound && Int($0.originEnd) == origin.upperBound
                    && bytes.last != 0x20
            } ?? false
        if !joins {
            pieces.append(
                Piece(
                    start: Int32(bytes.count), originStart: Int32(origin.lowerBound),
                    originEnd: Int32(origin.upperBound),
                    copied: false))
        }
        bytes.append(byte)
    }

    /// Makes the space at `index` (the last byte) come from its own start through `end`: split off
    /// the piece it is in, as a produced piece of its own, when it shares one.
    private static func stretchSpace(at index: Int, to end: Int, in pieces: inout [Piece]) {
        let last = pieces.count - 1
        if pieces[last].copied || Int(pieces[last].start) != index {
            let from = origin(of: index, in: pieces).lowerBound
            pieces.append(Piece(start: Int32(index), originStart: Int32(from), originEnd: Int32(end), copied: false))
        } else {
            pieces[last].originEnd = Int32(end)
        }
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
