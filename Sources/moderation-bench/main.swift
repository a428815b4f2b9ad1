// moderation-bench: in-process benchmarks (no sockets).
// Usage: moderation-bench [codec] [store | store.mutations | store.reads | store.big] [--runs N]
//        moderation-bench fanout [--subscribers N] [--rounds N] [--seconds S] [--server PATH]
//          (the event stream over sockets, against a release moderation-server child process)
//        moderation-bench wire [--only mutations,reads,big] [--seconds S] [--conns N] [--depth N] [--big-members N]
//          (the moderation service over sockets, against a release moderation-server child process)
// Build with `swift build -c release`; every figure is the median of N runs (default 5).

internal import Glibc

warnIfDebugBuild()
var arguments = Array(CommandLine.arguments.dropFirst())
var runs = 5
if let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
    runs = value
    arguments.removeSubrange(index...index + 1)
}
let suites: [String: () -> [Benchmark]] = [
    "codec": CodecBenchmarks.all,
    "store": StoreBenchmarks.all,
    "store.mutations": StoreBenchmarks.mutations,
    "store.reads": StoreBenchmarks.reads,
    "store.big": StoreBenchmarks.bigGroup,
]
if arguments.first == "fanout" {
    exit(FanoutBenchmark.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "wire" {
    exit(WireBenchmark.run(arguments: Array(arguments.dropFirst())))
}
let chosen = arguments.isEmpty ? ["codec", "store"] : arguments
for name in chosen {
    guard let suite = suites[name] else {
        print("unknown benchmark suite '\(name)'; known: \(suites.keys.sorted().joined(separator: ", "))")
        exit(2)
    }
    print("## \(name) (median of \(runs) runs)")
    for benchmark in suite() {
        let samples = benchmark.measure(runs: runs)
        let median = samples[samples.count / 2]
        let name = benchmark.name.padding(to: 62)
        let rate = median > 0 ? "  \(Int(1e9 / median)) op/s" : ""
        print("\(name) \(fixed(median)) ns/op  (min \(fixed(samples.first!)), max \(fixed(samples.last!)))\(rate)")
    }
}
StoreBenchmarks.cleanUp()
