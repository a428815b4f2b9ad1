/// Call latencies in log-linear buckets: fixed memory, mergeable, percentiles within ~1%.
///
/// Buckets are 1 µs wide below 1 ms, 10 µs below 10 ms, 100 µs below 100 ms, 1 ms below 1 s and
/// 10 ms up to 100 s; exact minimum, maximum and sum are kept beside them.
public struct LatencyHistogram: Sendable, Equatable {
    private static let tiers: [(limitMicros: UInt64, step: UInt64)] = [
        (1_000, 1), (10_000, 10), (100_000, 100), (1_000_000, 1_000), (100_000_000, 10_000),
    ]
    private static let bucketCount: Int = {
        var count = 0
        var lower: UInt64 = 0
        for tier in tiers {
            count += Int((tier.limitMicros - lower) / tier.step)
            lower = tier.limitMicros
        }
        return count + 1
    }()

    private var buckets: [UInt64]
    public private(set) var count: UInt64 = 0
    public private(set) var minNanoseconds: UInt64 = .max
    public private(set) var maxNanoseconds: UInt64 = 0
    public private(set) var sumNanoseconds: UInt64 = 0

    public init() {
        buckets = [UInt64](repeating: 0, count: Self.bucketCount)
    }

    public mutating func record(nanoseconds: UInt64) {
        buckets[Self.index(micros: nanoseconds / 1_000)] += 1
        count += 1
        minNanoseconds = min(minNanoseconds, nanoseconds)
        maxNanoseconds = max(maxNanoseconds, nanoseconds)
        sumNanoseconds &+= nanoseconds
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for i in 0..<buckets.count { buckets[i] += other.buckets[i] }
        count += other.count
        minNanoseconds = min(minNanoseconds, other.minNanoseconds)
        maxNanoseconds = max(maxNanoseconds, other.maxNanoseconds)
        sumNanoseconds &+= other.sumNanoseconds
    }

    /// The latency below which `fraction` (0–1) of the calls fell, in nanoseconds.
    public func percentile(_ fraction: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let target = UInt64((Double(count) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (index, n) in buckets.enumerated() {
            seen += n
            if seen >= max(1, target) {
                return min(max(Self.upperMicros(index) * 1_000, minNanoseconds), maxNanoseconds)
            }
        }
        return maxNanoseconds
    }

    public var meanNanoseconds: UInt64 { count == 0 ? 0 : sumNanoseconds / count }

    /// Non-empty buckets as (upper bound in µs, count), for printing a histogram.
    public var nonEmptyBuckets: [(upperMicros: UInt64, count: UInt64)] {
        buckets.enumerated().filter { $0.element > 0 }.map { (Self.upperMicros($0.offset), $0.element) }
    }

    private static func index(micros: UInt64) -> Int {
        var offset = 0
        var lower: UInt64 = 0
        for tier in tiers {
            if micros < tier.limitMicros { return offset + Int((micros - lower) / tier.step) }
            offset += Int((tier.limitMicros - lower) / tier.step)
            lower = tier.limitMicros
        }
        return bucketCount - 1
    }

    private static func upperMicros(_ index: Int) -> UInt64 {
        var offset = 0
        var lower: UInt64 = 0
        for tier in tiers {
            let width = Int((tier.limitMicros - lower) / tier.step)
            if index < offset + width { return lower + UInt64(index - offset + 1) * tier.step }
            offset += width
            lower = tier.limitMicros
        }
        return tiers.last!.limitMicros
    }
}
