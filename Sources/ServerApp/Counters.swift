internal import CSystemShims

/// A fixed block of 64-bit counters updated with relaxed atomic adds from any thread.
///
/// Metrics are written on every call from every event loop and worker; a lock per call would
/// be the costliest thing about them. Reads (a scrape) see each counter exactly, the block as a
/// whole approximately — as Prometheus expects.
///
/// A block starts on a cache line of its own and fills whole lines, so two blocks written by
/// different threads (the loops' traffic, the event fan-out's messages) never share one.
final class Counters: @unchecked Sendable {
    // Invariant: `slots` is allocated once, never resized, and only touched through atomics.
    private let slots: UnsafeMutablePointer<UInt64>
    let count: Int

    private static let lineBytes = 64

    init(count: Int) {
        self.count = count
        let bytes = (count * 8 + Self.lineBytes - 1) / Self.lineBytes * Self.lineBytes
        slots = UnsafeMutableRawPointer.allocate(byteCount: max(bytes, Self.lineBytes), alignment: Self.lineBytes)
            .bindMemory(to: UInt64.self, capacity: count)
        slots.initialize(repeating: 0, count: count)
    }

    deinit { UnsafeMutableRawPointer(slots).deallocate() }

    func add(_ index: Int, _ value: UInt64 = 1) { cshim_atomic_add(slots + index, value) }

    subscript(index: Int) -> UInt64 { cshim_atomic_load(slots + index) }
}
