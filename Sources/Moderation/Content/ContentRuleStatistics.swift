/// The content rules a server has compiled, and what compiling them cost (for `/metrics`).
public struct ContentRuleStatistics: Sendable, Equatable {
    /// Rule sets in memory (the apps' and the groups' that have had rules).
    public var sets = 0
    /// Rules across them.
    public var rules = 0
    /// Sets compiled since start.
    public var compiles: UInt64 = 0
    /// Compiles Hyperscan refused as a whole (the set in place stayed).
    public var compileFailures: UInt64 = 0
    /// Time spent compiling since start, in seconds.
    public var compileSeconds = 0.0

    public init() {}

    mutating func record(compileTime: Duration, failed: Bool) {
        compiles += 1
        if failed { compileFailures += 1 }
        let parts = compileTime.components
        compileSeconds += Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
