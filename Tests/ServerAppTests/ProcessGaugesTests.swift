import Testing

@testable import ServerApp

/// The process's memory gauges on `/metrics`: what an operator reads to tell a leak (heap in
/// use growing) from allocator retention (heap held from the system growing).
@Suite("Process gauges")
struct ProcessGaugesTests {
    @Test("resident memory, heap in use and heap held are reported, in use never above held")
    func memoryGauges() {
        let held = [UInt8](repeating: 1, count: 8 << 20) // 8 MiB the heap must count as in use
        let samples = Dictionary(uniqueKeysWithValues: ServerGauges.processSamples().map { ($0.name, $0.value) })
        let resident = samples["process_resident_memory_bytes"] ?? 0
        let inUse = samples["process_heap_in_use_bytes"] ?? 0
        let system = samples["process_heap_system_bytes"] ?? 0
        #expect(inUse >= Double(held.count))
        #expect(system >= inUse)
        #expect(resident >= Double(held.count))
        withExtendedLifetime(held) {}
    }
}
