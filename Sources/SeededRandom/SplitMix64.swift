/// A seeded random generator (SplitMix64): the same sequence from the same seed on every run and
/// machine, so randomized tests reproduce from their seed and benchmarks see the same inputs.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (with the slight bias of a modulo, which seeded inputs do not mind).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
