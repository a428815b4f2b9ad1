import CommandLineSupport
import Moderation
import ModerationEvents
import Synchronization
import ThreadSupport

/// `moderation-bench registry`: what subscribing and unsubscribing cost as the number of open
/// subscriptions grows, through the event hub in process (no sockets).
///
/// For each size N, N subscriptions of one app start (a third whole-app, a third one group, a
/// third a user who belongs to five groups), then all end as their streams go away; each phase is
/// timed until the hub's dispatcher has applied it (`EventHub.settle`). O(1) per operation shows
/// as the same time per operation at every size (an earlier registry copied the
/// app's indexes on every change, so each cost O(N)).
enum RegistryBenchmark {
    static func run(arguments: [String]) -> Int32 {
        var runs = 3
        var sizes = [1_000, 10_000, 100_000]
        let flagsRead = SuiteFlags.read(arguments, suite: "registry") { flag, reader throws(ArgumentError) in
            switch flag.name {
            case "--runs": runs = try reader.value(for: flag, placeholder: "N").integer(in: 1...100)
            case "--sizes":
                let value = try reader.value(for: flag, placeholder: "N,N,…")
                sizes = try value.text.split(separator: ",").map { text throws(ArgumentError) in
                    try ArgumentValue(String(text), name: flag.name).integer(in: 1...10_000_000)
                }
            default: return false
            }
            return true
        }
        guard flagsRead else { return 2 }
        print("setting up: 100 users, 100 groups of 5 members each…")
        let fixture = StoreBenchmarks.Fixture(name: "registry")
        defer { StoreBenchmarks.cleanUp() }
        setUp(fixture)
        print("## registry (subscribe and unsubscribe through the event hub in process; median of \(runs) runs)")
        print(
            "subscriptions".padding(to: 16) + "subscribe µs/op".padding(to: 34) + "unsubscribe µs/op".padding(to: 34)
                + "check")
        for size in sizes {
            var subscribe: [Double] = []
            var unsubscribe: [Double] = []
            var check = 0
            for _ in 0..<runs {
                let (started, ended, count) = measure(fixture.service, size: size)
                subscribe.append(started)
                unsubscribe.append(ended)
                check &+= count
            }
            subscribe.sort()
            unsubscribe.sort()
            print(
                String(size).padding(to: 16) + range(subscribe).padding(to: 34) + range(unsubscribe).padding(to: 34)
                    + String(check))
        }
        return 0
    }

    /// "median (min–max)" in microseconds.
    private static func range(_ sorted: [Double]) -> String {
        "\(fixed(sorted[sorted.count / 2] / 1_000)) (\(fixed(sorted.first! / 1_000))–\(fixed(sorted.last! / 1_000)))"
    }

    /// Users u0…u99; group gI owned by uI with u(I+1)…u(I+4) as members: each user is in 5 groups.
    private static func setUp(_ fixture: StoreBenchmarks.Fixture) {
        let app = fixture.client(nil)
        fixture.createUsers((0..<100).map { "u\($0)" })
        for index in 0..<100 {
            let members = (1...4).map { MemberGrant(uid: "u\((index + $0) % 100)") }
            fixture.wait {
                app.service.createGroup(
                    app.caller,
                    NewGroup(guid: "g\(index)", name: "Group \(index)", owner: "u\(index)", members: members),
                    replay: { _ in [] }, completion: $0)
            }
        }
    }

    /// Nanoseconds per subscription started and per subscription ended, and the subscriptions
    /// the hub counted at the peak (folded into the check column so the work is not dropped).
    private static func measure(_ service: ModerationService, size: Int) -> (Double, Double, Int) {
        let hub = EventHub(service: service, encode: { _ in [] }, maxSubscriptionsPerApp: size)
        defer { hub.shutdown() }
        let sinks = (0..<size).map { _ in BenchSink() }
        let began = monotonicNanoseconds()
        for (index, sink) in sinks.enumerated() {
            let target: SubscriptionTarget
            switch index % 3 {
            case 0: target = .app
            case 1: target = .groups(["g\(index % 100)"])
            default: target = .user("u\(index % 100)")
            }
            do throws(ModerationError) {
                try hub.subscribe(SubscriptionRequest(caller: Caller(app: "bench"), target: target), sink: sink)
            } catch {
                print("  subscribe failed: \(error)")
            }
        }
        hub.settle()
        let started = monotonicNanoseconds()
        let peak = hub.subscriptionCount
        for sink in sinks { sink.close() }
        hub.settle()
        let ended = monotonicNanoseconds()
        if hub.subscriptionCount != 0 { print("  \(hub.subscriptionCount) subscriptions left open") }
        return (Double(started - began) / Double(size), Double(ended - started) / Double(size), peak)
    }

    /// A stream that takes every event and goes away when told to, as a closed connection's does.
    final class BenchSink: EventSink {
        private let handlers = Mutex<[@Sendable (SinkClosure) -> Void]>([])

        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome { .sent }
        func send(encoded: [UInt8]) -> EventSendOutcome { .sent }
        func waitForCapacity(milliseconds: Int) -> Bool { true }
        func end(_ reason: SubscriptionEnd) {}
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) { handlers.withLock { $0.append(handler) } }

        func close() {
            for handler in handlers.withLock({ $0 }) { handler(.gone) }
        }
    }
}
