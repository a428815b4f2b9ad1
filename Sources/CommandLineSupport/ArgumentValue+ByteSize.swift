/// Sizes in bytes.
extension ArgumentValue {
    /// The units `byteSize(in:)` reads, longest first so that "MiB" is not taken for "B".
    ///
    /// The IEC names (KiB, MiB, …) and the single letters (K, M, G, T, as systemd, nginx and the
    /// JVM read them) count in powers of 1024; the SI names (kB, MB, GB, TB) in powers of 1000,
    /// as their standard says. Case is ignored.
    private static let byteUnits: [(suffix: String, bytes: Double)] = [
        ("kib", 0x1p10), ("mib", 0x1p20), ("gib", 0x1p30), ("tib", 0x1p40),
        ("kb", 1e3), ("mb", 1e6), ("gb", 1e9), ("tb", 1e12),
        ("k", 0x1p10), ("m", 0x1p20), ("g", 0x1p30), ("t", 0x1p40),
        ("b", 1),
    ]

    /// A size in bytes within `range`: plain bytes ("1048576"), or a number with a unit
    /// ("512MiB", "2GiB", "1.5 GiB", "64k", "100MB"); a fraction is rounded down to whole bytes.
    public func byteSize(in range: ClosedRange<Int>) throws(ArgumentError) -> Int {
        let lowered = text.lowercased()
        var number = Substring(lowered)
        var unit = 1.0
        if let match = Self.byteUnits.first(where: { lowered.hasSuffix($0.suffix) }) {
            number = lowered.dropLast(match.suffix.count)
            unit = match.bytes
            while number.last == " " { number.removeLast() }
        }
        let digits = number.filter { $0 != "." }
        guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }), number.count - digits.count <= 1,
            let value = Double(number)
        else {
            throw error("'\(text)' is not a size (bytes, or a number with a unit: 64KiB, 512MiB, 2GiB)")
        }
        let bytes = (value * unit).rounded(.down)
        guard bytes <= Double(range.upperBound), bytes >= Double(range.lowerBound) else {
            throw error("'\(text)' is not a size from \(range.lowerBound) to \(range.upperBound) bytes")
        }
        return Int(bytes)
    }
}
