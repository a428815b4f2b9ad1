internal import Glibc

/// One measured piece of work, in the style of NIO's performance tester: warm up, run several
/// times, report the median. The body returns a value that is folded into a checksum so the
/// optimiser cannot drop the work.
struct Benchmark {
    let name: String
    let iterations: Int
    /// Operations one iteration of `body` performs (a multi-threaded burst does many); figures
    /// are reported per operation.
    var operationsPerIteration: Int = 1
    let body: () -> Int

    /// Runs the benchmark `runs` times after one warm-up run; returns nanoseconds per operation
    /// of every run, sorted.
    func measure(runs: Int) -> [Double] {
        var checksum = 0
        for _ in 0..<max(1, iterations / 10) { checksum &+= body() }
        var samples: [Double] = []
        for _ in 0..<runs {
            let start = monotonicNanoseconds()
            for _ in 0..<iterations { checksum &+= body() }
            samples.append(Double(monotonicNanoseconds() - start) / Double(iterations * operationsPerIteration))
        }
        if checksum == 42 { print("") } // keep the checksum alive
        return samples.sorted()
    }
}

func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func warnIfDebugBuild() {
    #if DEBUG
        print("WARNING: this is a debug build; measure with `swift build -c release`.")
    #endif
}

/// `value` with one decimal, without Foundation.
func fixed(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

extension String {
    /// The string padded with spaces to `width` characters.
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
