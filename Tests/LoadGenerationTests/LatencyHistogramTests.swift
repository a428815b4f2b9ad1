import LoadGeneration
import Testing

/// The histogram behind every latency figure of `rpc-probe bench`: bucket bounds per tier,
/// percentiles kept within the exact minimum and maximum, merging.
@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    /// A latency and the upper bound (µs) of the bucket it must land in.
    struct Bucketing: Sendable, CustomTestStringConvertible {
        let micros: UInt64
        let upperMicros: UInt64
        var testDescription: String { "\(micros) µs ≤ \(upperMicros) µs" }
    }

    @Test(
        "each tier has its bucket width: 1 µs below 1 ms, 10 µs below 10 ms, … 10 ms up to 100 s, then one overflow bucket",
        arguments: [
            Bucketing(micros: 0, upperMicros: 1), Bucketing(micros: 999, upperMicros: 1_000),
            Bucketing(micros: 1_000, upperMicros: 1_010), Bucketing(micros: 9_999, upperMicros: 10_000),
            Bucketing(micros: 10_000, upperMicros: 10_100), Bucketing(micros: 123_456, upperMicros: 124_000),
            Bucketing(micros: 1_000_000, upperMicros: 1_010_000),
            Bucketing(micros: 99_999_999, upperMicros: 100_000_000),
            Bucketing(micros: 500_000_000, upperMicros: 100_000_000),
        ])
    func buckets(_ case: Bucketing) {
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: `case`.micros * 1_000)
        #expect(histogram.nonEmptyBuckets.map(\.upperMicros) == [`case`.upperMicros])
        #expect(histogram.nonEmptyBuckets.map(\.count) == [1])
    }

    @Test("percentiles walk the buckets and stay within the exact minimum and maximum")
    func percentiles() {
        var histogram = LatencyHistogram()
        #expect(histogram.percentile(0.5) == 0 && histogram.meanNanoseconds == 0)
        for micros in 1...100 as ClosedRange<UInt64> { histogram.record(nanoseconds: micros * 1_000 - 500) }
        #expect(histogram.count == 100)
        #expect(histogram.minNanoseconds == 500 && histogram.maxNanoseconds == 99_500)
        #expect(histogram.percentile(0.5) == 50_000, "the 50th call's bucket ends at 50 µs")
        #expect(histogram.percentile(0.99) == 99_000)
        #expect(histogram.percentile(1.0) == 99_500, "capped at the slowest call, not its bucket's end")
        #expect(histogram.percentile(0) == 1_000, "the fastest call's bucket")
        #expect(histogram.meanNanoseconds == 50_000)
    }

    @Test("merging two histograms equals recording every value in one")
    func merge() {
        var left = LatencyHistogram()
        var right = LatencyHistogram()
        var all = LatencyHistogram()
        for (index, nanoseconds) in [3_000, 40_000_000, 999, 2_500_000, 7, 61_000_000_000].enumerated()
            as EnumeratedSequence<[UInt64]>
        {
            if index % 2 == 0 { left.record(nanoseconds: nanoseconds) } else { right.record(nanoseconds: nanoseconds) }
            all.record(nanoseconds: nanoseconds)
        }
        left.merge(right)
        #expect(left == all)
        var empty = LatencyHistogram()
        empty.merge(all)
        #expect(empty == all)
    }
}
