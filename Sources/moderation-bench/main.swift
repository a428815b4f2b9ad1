// moderation-bench: in-process benchmarks (no sockets).
// Usage: moderation-bench [codec] [store | store.mutations | store.reads | store.posting | store.big] [--runs N]
//        moderation-bench registry [--runs N] [--sizes 1000,10000,100000]
//          (subscribe and unsubscribe through the event hub in process, per operation, by size)
//        moderation-bench fanout [--subscribers N] [--rounds N] [--seconds S] [--server PATH]
//          (the event stream over sockets, against a release moderation-server child process)
//        moderation-bench wire [--only mutations,reads,big,checkpost,content,webhooks] [--seconds S] [--conns N] [--depth N]
//          [--big-members N] [--rounds N] [--pin] [--rules FILE]
//          (--rules: content-bench --write-rules's file, which the content suite loads)
//          (--pin: the server on CPU 0, this process on CPU 1)
//          (the moderation service over sockets, against a release moderation-server child process)
//          [--postgres-url URL [--instances N] [--apps N [--route-by-app]] [--postgres-writers N]] [--keyed] [--snapshot-command CMD]
//          (the same on PostgreSQL, over N instances; bench/postgres.py drives it beside pgbench)
// Build with `swift build -c release`; every figure is the median of N runs (default 5).

import CommandLineSupport
internal import Glibc

warnIfDebugBuild()
let arguments = Array(CommandLine.arguments.dropFirst())
let suites: [String: () -> [Benchmark]] = [
    "codec": CodecBenchmarks.all,
    "store": StoreBenchmarks.all,
    "store.mutations": StoreBenchmarks.mutations,
    "store.reads": StoreBenchmarks.reads,
    "store.posting": StoreBenchmarks.posting,
    "store.big": StoreBenchmarks.bigGroup,
]
if arguments.first == "fanout" {
    exit(FanoutBenchmark.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "registry" {
    exit(RegistryBenchmark.run(arguments: Array(arguments.dropFirst())))
}
if arguments.first == "wire" {
    exit(WireBenchmark.run(arguments: Array(arguments.dropFirst())))
}
var runs = 5
var chosen: [String] = []
var reader = ArgumentReader(arguments)
do throws(ArgumentError) {
    while let token = reader.next() {
        switch token {
        case .flag(let flag) where flag.name == "--runs":
            runs = try reader.value(for: flag, placeholder: "N").integer(in: 1...1000)
        case .flag(let flag): throw ArgumentError("unknown flag \(flag.argument)")
        case .positional(let name): chosen.append(name)
        }
    }
} catch {
    print("moderation-bench: \(error.message)")
    exit(2)
}
for name in chosen.isEmpty ? ["codec", "store"] : chosen {
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
