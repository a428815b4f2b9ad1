/// 64 KiB of zeros, copied from when a byte array grows by zeros (a `memcpy`, fast in debug
/// builds too, where appending `repeatElement(0, …)` goes element by element).
nonisolated(unsafe) private let zeroChunk: UnsafeBufferPointer<UInt8> = {
    let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 * 1024)
    memory.initialize(repeating: 0, count: 64 * 1024)
    return UnsafeBufferPointer(start: memory, count: 64 * 1024)
}()

extension Array where Element == UInt8 {
    /// Appends `count` zero bytes (room that a C call then fills in place).
    ///
    /// Grows geometrically, as `append` does: `reserveCapacity` reallocates to exactly what it is
    /// asked for, so reserving `count + n` on every call copied the whole array each time — a
    /// 4 MiB frame arriving 64 KiB at a time was copied (into a fresh mapping) 64 times, 10–30 ms
    /// of a loop turn per read under the partial-frames attack.
    public mutating func appendZeros(_ count: Int) {
        guard count > 0 else { return }
        if capacity < self.count + count { reserveCapacity(Swift.max(self.count + count, 2 * capacity)) }
        var left = count
        while left > 0 {
            let n = Swift.min(left, zeroChunk.count)
            append(contentsOf: UnsafeBufferPointer(rebasing: zeroChunk[0..<n]))
            left -= n
        }
    }
}
