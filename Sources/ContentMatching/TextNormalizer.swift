internal import CICU

/// Normalizes text for matching: ICU's NFKC_Casefold, then the nonspacing marks (Mn) of the
/// canonical decomposition removed and the rest recomposed (NFC), so that `BÁDWORD`,
/// `ｂａｄｗｏｒｄ` and `badword` read the same; then every run of white space (Unicode's
/// White_Space, `WordCharacters.isSpace`) becomes one ASCII space, so that a phrase is a literal.
///
/// The text is cut where ICU reports a normalization boundary before a character, and each piece
/// (a segment) is normalized alone, which gives the same result as normalizing the whole text and
/// lets every output byte name the original bytes it came from. An ASCII character followed by
/// another ASCII character (or the end) is a segment of its own and is only lowered, without
/// calling ICU. Keeps its buffers between calls: one normalizer per thread.
public final class TextNormalizer {
    private let casefold: OpaquePointer
    private let decompose: OpaquePointer
    private let compose: OpaquePointer
    /// The current segment as UTF-16, and two buffers the steps write into in turn.
    private var segment: [UInt16] = []
    private var first: [UInt16] = []
    private var second: [UInt16] = []

    public init() {
        guard let casefold = cicu_nfkc_casefold(), let decompose = cicu_nfd(), let compose = cicu_nfc() else {
            fatalError("ICU's normalization data is missing (libicu)")
        }
        self.casefold = casefold
        self.decompose = decompose
        self.compose = compose
    }

    /// The normalized form of `text` (any bytes; those that are not UTF-8 read as U+FFFD).
    public func normalize(_ text: UnsafeBufferPointer<UInt8>) -> NormalizedText {
        var result = NormalizedText()
        normalize(text, into: &result)
        return result
    }

    /// The normalized form of `text`, as a string.
    public func normalize(_ text: String) -> String {
        var text = text
        return text.withUTF8 { normalize($0) }.string
    }

    /// Normalizes `text` into `result`, reusing its storage.
    public func normalize(_ text: UnsafeBufferPointer<UInt8>, into result: inout NormalizedText) {
        result.removeAll()
        segment.removeAll(keepingCapacity: true)
        var segmentStart = 0
        var index = 0
        while index < text.count {
            let byte = text[index]
            if byte < 0x80 {
                flush(into: &result, origin: segmentStart..<index)
                // The run of ASCII up to the next non-ASCII character, or the end: all of it but
                // its last character (which a combining mark may follow) is only lowered.
                var end = index + 1
                while end < text.count && text[end] < 0x80 { end += 1 }
                let lowered = end == text.count ? end : end - 1
                if lowered > index { result.appendLowered(ascii: text, lowered: index..<lowered) }
                index = lowered
                segmentStart = index
                if index < text.count {
                    segment.append(UInt16(text[index]))
                    index += 1
                }
                continue
            }
            let (scalar, length) = UTF8Decoding.scalar(in: text, at: index)
            if cicu_has_boundary_before(casefold, Int32(bitPattern: scalar.value)) {
                flush(into: &result, origin: segmentStart..<index)
                segmentStart = index
            }
            segment.append(contentsOf: UTF16.encode(scalar)!)
            index += length
        }
        flush(into: &result, origin: segmentStart..<text.count)
    }

    /// Normalizes the pending segment and appends it, all of it coming from `origin`.
    private func flush(into result: inout NormalizedText, origin: Range<Int>) {
        guard !segment.isEmpty else { return }
        defer { segment.removeAll(keepingCapacity: true) }
        let folded = run(casefold, from: &segment, count: segment.count, into: &first)
        let decomposed = run(decompose, from: &first, count: folded, into: &second)
        var kept = 0
        var index = 0
        while index < decomposed {
            let (scalar, width) = Self.scalar(in: second, at: index, count: decomposed)
            if !cicu_is_nonspacing_mark(Int32(bitPattern: scalar)) {
                for offset in 0..<width { storeFirst(second[index + offset], at: kept + offset) }
                kept += width
            }
            index += width
        }
        let composed = run(compose, from: &first, count: kept, into: &second)
        index = 0
        while index < composed {
            let (scalar, width) = Self.scalar(in: second, at: index, count: composed)
            result.append(scalar: scalar, from: origin)
            index += width
        }
    }

    private func storeFirst(_ unit: UInt16, at index: Int) {
        if index < first.count { first[index] = unit } else { first.append(unit) }
    }

    /// Runs one ICU normalizer over `count` units of `source`, growing `destination` as needed.
    /// - Returns: the length of the result in `destination`.
    private func run(
        _ normalizer: OpaquePointer, from source: inout [UInt16], count: Int, into destination: inout [UInt16]
    ) -> Int {
        guard count > 0 else { return 0 }
        if destination.count < count * 3 + 8 { destination = [UInt16](repeating: 0, count: count * 3 + 8) }
        while true {
            var status: Int32 = 0
            let written = source.withUnsafeBufferPointer { input in
                destination.withUnsafeMutableBufferPointer { output in
                    cicu_normalize(
                        normalizer, input.baseAddress, Int32(count), output.baseAddress, Int32(output.count), &status)
                }
            }
            if Int(status) == Int(CICU_BUFFER_OVERFLOW) {
                destination = [UInt16](repeating: 0, count: Int(written) + 8)
                continue
            }
            precondition(status <= 0, "ICU normalization failed with status \(status)")
            return Int(written)
        }
    }

    /// The scalar at `index` of UTF-16 `units` and how many units it takes (a lone surrogate
    /// reads as U+FFFD).
    private static func scalar(in units: [UInt16], at index: Int, count: Int) -> (UInt32, Int) {
        let unit = units[index]
        if UTF16.isLeadSurrogate(unit), index + 1 < count, UTF16.isTrailSurrogate(units[index + 1]) {
            let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(units[index + 1]) - 0xDC00)
            return (value, 2)
        }
        if UTF16.isLeadSurrogate(unit) || UTF16.isTrailSurrogate(unit) { return (0xFFFD, 1) }
        return (UInt32(unit), 1)
    }
}
