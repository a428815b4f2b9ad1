internal import CZlib

/// A PNG decoded to RGBA pixels, for tests that check what a browser drew (the HTML bench report
/// rendered by headless Chromium): which colours fill how much of a region.
///
/// Only what Chromium's screenshots are: 8 bits a channel, RGB or RGBA, not interlaced — anything
/// else is refused, not guessed at. The image data is zlib (inflated here with zlib's
/// `uncompress`) with one filter byte before each row (PNG's five filters undone per row).
public struct PNGImage: Sendable {
    public let width: Int
    public let height: Int
    /// Red, green, blue and alpha, one byte each, row after row.
    public let pixels: [UInt8]

    /// A pixel's red, green and blue, as `0xRRGGBB`.
    public func rgb(x: Int, y: Int) -> UInt32 {
        let offset = (y * width + x) * 4
        return UInt32(pixels[offset]) << 16 | UInt32(pixels[offset + 1]) << 8 | UInt32(pixels[offset + 2])
    }

    /// Decodes `bytes`, a whole PNG file.
    /// - Throws: `TestFailure` for what is not a PNG this reads, or is damaged.
    public init(_ bytes: [UInt8]) throws {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw TestFailure("not a PNG file")
        }
        var offset = 8
        var header: [UInt8] = []
        var compressed: [UInt8] = []
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        while offset + 12 <= bytes.count {
            let length = word(offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            guard offset + 12 + length <= bytes.count else { throw TestFailure("PNG chunk \(type) is cut short") }
            let data = bytes[offset + 8..<offset + 8 + length]
            if type == "IHDR" { header = Array(data) }
            if type == "IDAT" { compressed += data }
            offset += 12 + length
            if type == "IEND" { break }
        }
        guard header.count == 13 else { throw TestFailure("PNG without a header") }
        width = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
        height = header[4..<8].reduce(0) { $0 << 8 | Int($1) }
        let (depth, colorType, interlace) = (header[8], header[9], header[12])
        guard depth == 8, colorType == 2 || colorType == 6, interlace == 0, width > 0, height > 0 else {
            throw TestFailure(
                "PNG of bit depth \(depth), colour type \(colorType), interlace \(interlace): not read here")
        }
        let channels = colorType == 6 ? 4 : 3
        let stride = width * channels
        var raw = [UInt8](repeating: 0, count: (stride + 1) * height)
        var rawLength = UInt(raw.count)
        let status = raw.withUnsafeMutableBufferPointer { out in
            compressed.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &rawLength, input.baseAddress, UInt(input.count))
            }
        }
        guard status == Z_OK, rawLength == UInt(raw.count) else {
            throw TestFailure("PNG image data does not inflate to \(raw.count) bytes (zlib status \(status))")
        }
        pixels = try Self.unfilter(raw, stride: stride, channels: channels, height: height)
    }

    /// Undoes each row's filter (none, sub, up, average, Paeth) and widens RGB to RGBA.
    private static func unfilter(_ raw: [UInt8], stride: Int, channels: Int, height: Int) throws -> [UInt8] {
        var previous = [UInt8](repeating: 0, count: stride)
        var row = [UInt8](repeating: 0, count: stride)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(stride / channels * 4 * height)
        for y in 0..<height {
            let start = y * (stride + 1)
            let filter = raw[start]
            for x in 0..<stride {
                let left = x >= channels ? Int(row[x - channels]) : 0
                let up = Int(previous[x])
                let upLeft = x >= channels ? Int(previous[x - channels]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = left
                case 2: predicted = up
                case 3: predicted = (left + up) / 2
                case 4:
                    let estimate = left + up - upLeft
                    let (toLeft, toUp, toUpLeft) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
                    predicted = toLeft <= toUp && toLeft <= toUpLeft ? left : toUp <= toUpLeft ? up : upLeft
                default: throw TestFailure("PNG row \(y) has filter \(filter)")
                }
                row[x] = UInt8(truncatingIfNeeded: Int(raw[start + 1 + x]) + predicted)
            }
            for x in Swift.stride(from: 0, to: stride, by: channels) {
                pixels += row[x..<x + 3]
                pixels.append(channels == 4 ? row[x + 3] : 255)
            }
            swap(&previous, &row)
        }
        return pixels
    }
}
