/// Base64 (RFC 4648 §4) and its URL-safe alphabet (§5), without Foundation.
///
/// Each user states what it accepts: proto3 JSON reads either alphabet with or without padding,
/// the paging cursors only their own canonical unpadded URL-safe form.
public enum Base64 {
    /// The alphabet of an encoding: the two characters for 62 and 63.
    public enum Alphabet: Sendable {
        /// `+` and `/` (RFC 4648 §4).
        case standard
        /// `-` and `_` (RFC 4648 §5), safe in URLs and file names.
        case urlSafe
    }

    /// The alphabets a decoder accepts; with both, one string may mix them.
    public struct Alphabets: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let standard = Alphabets(rawValue: 1)
        public static let urlSafe = Alphabets(rawValue: 2)
    }

    /// What a decoder makes of trailing `=`.
    public enum Padding: Sendable {
        /// The text is a whole number of 4-character groups, padded with `=` as needed.
        case required
        /// `=` may be left out, but what is there must complete the last group.
        case optional
        /// No `=` at all.
        case forbidden
    }

    /// Why a text is not base64, checked in this order.
    public enum Failure: Error, Equatable, Sendable {
        /// Trailing `=` that the padding rule refuses: more than two, any where forbidden, or not
        /// exactly what completes the last group (where required, also none when it is needed).
        case padding
        /// Without its padding, one character more than a whole number of groups: no whole byte.
        case length
        /// A byte outside the accepted alphabets (the first one), at this offset of the UTF-8 text.
        case character(UInt8, offset: Int)
        /// The last character carries bits beyond the last byte, which a canonical decoder refuses
        /// (RFC 4648 §3.5).
        case nonzeroPadBits
    }

    /// `bytes` in base64; by default RFC 4648 §4's: the standard alphabet, padded.
    public static func encode(_ bytes: [UInt8], alphabet: Alphabet = .standard, padded: Bool = true) -> String {
        let (groups, rest) = bytes.count.quotientAndRemainder(dividingBy: 3)
        let count = groups * 4 + (rest == 0 ? 0 : padded ? 4 : rest + 1)
        guard count > 0 else { return "" }
        let characters: StaticString =
            switch alphabet {
            case .standard: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            case .urlSafe: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            }
        return String(unsafeUninitializedCapacity: count) { out in
            let table = characters.utf8Start
            var written = 0
            func put(_ chunk: UInt32, _ shift: UInt32) {
                out[written] = table[Int(chunk &>> shift & 63)]
                written += 1
            }
            var index = 0
            while index + 3 <= bytes.count {
                let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                put(chunk, 18)
                put(chunk, 12)
                put(chunk, 6)
                put(chunk, 0)
                index += 3
            }
            if rest > 0 {
                let chunk = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                put(chunk, 18)
                put(chunk, 12)
                if rest == 2 { put(chunk, 6) }
                while written < count {
                    out[written] = UInt8(ascii: "=")
                    written += 1
                }
            }
            return written
        }
    }

    /// The bytes `text` encodes.
    ///
    /// - Parameters:
    ///   - alphabets: the alphabets whose characters 62 and 63 are accepted.
    ///   - padding: what to make of trailing `=`.
    ///   - canonical: refuse nonzero pad bits, so that each byte string has exactly one text.
    /// - Throws: the first failure, checking in the order of `Failure`'s cases.
    public static func decode(
        _ text: String, accepting alphabets: Alphabets = .standard, padding: Padding = .required,
        canonical: Bool = false
    ) throws(Failure) -> [UInt8] {
        var text = text
        return try text.withUTF8 { decode($0, alphabets: alphabets, padding: padding, canonical: canonical) }.get()
    }

    private static func decode(
        _ input: UnsafeBufferPointer<UInt8>, alphabets: Alphabets, padding: Padding, canonical: Bool
    ) -> Result<[UInt8], Failure> {
        var count = input.count
        while count > 0, input[count - 1] == UInt8(ascii: "=") { count -= 1 }
        let pads = input.count - count
        let completesGroup = input.count % 4 == 0
        let paddingFits =
            switch padding {
            case .required: pads <= 2 && completesGroup
            case .optional: pads == 0 || (pads <= 2 && completesGroup)
            case .forbidden: pads == 0
            }
        guard paddingFits else { return .failure(.padding) }
        guard count % 4 != 1 else { return .failure(.length) }

        let standard = alphabets.contains(.standard)
        let urlSafe = alphabets.contains(.urlSafe)
        var out: [UInt8] = []
        out.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        for offset in 0..<count {
            let byte = input[offset]
            let sextet: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): sextet = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): sextet = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sextet = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+") where standard, UInt8(ascii: "-") where urlSafe: sextet = 62
            case UInt8(ascii: "/") where standard, UInt8(ascii: "_") where urlSafe: sextet = 63
            default: return .failure(.character(byte, offset: offset))
            }
            accumulator = accumulator << 6 | sextet
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> bits))
                accumulator &= (1 << bits) - 1
            }
        }
        // What is left in the accumulator are the pad bits of the last character.
        guard !canonical || accumulator == 0 else { return .failure(.nonzeroPadBits) }
        return .success(out)
    }
}
