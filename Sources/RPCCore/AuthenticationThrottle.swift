import Synchronization

/// Failed handshakes counted per source address, so that a flood of wrong API keys costs a
/// bounded number of log lines — without ever slowing a correct key, which is checked first and
/// never consults the throttle.
///
/// Each address has a token bucket of log lines: its first `burst` failures are logged one by
/// one, then one more each `refillNanoseconds`; failures beyond are refused without a line of
/// their own, counted, and reported per address at most once per `summaryNanoseconds`
/// (`summaries(now:)`). A bucket shared by every address bounds the lines a spray from many
/// addresses causes. The table holds at most `capacity` addresses and evicts the one that came
/// first, so it cannot grow into a memory hole; what an evicted address had not reported yet is
/// still counted in the next summary. A lock guards the table: it is taken once per failed
/// HELLO and once per summary, never on a call's path.
public final class AuthenticationThrottle: Sendable {
    /// How many lines a failing address (and all of them together) may cause.
    public struct Configuration: Sendable {
        /// Failures of one address logged one by one before the throttle sets in.
        public var burst = 5
        /// One more logged failure per address after this long.
        public var refillNanoseconds: UInt64 = 10_000_000_000
        /// Failures logged one by one across every address before the shared bucket is empty.
        public var sharedBurst = 50
        /// One more logged failure across every address after this long.
        public var sharedRefillNanoseconds: UInt64 = 1_000_000_000
        /// At most one summary line per address in this interval.
        public var summaryNanoseconds: UInt64 = 10_000_000_000
        /// Addresses tracked at once.
        public var capacity = 4_096
        /// Addresses named in one round of summaries; the rest are folded into one count.
        public var summariesPerRound = 20

        public init() {}
    }

    /// Refusals of one address that were not logged one by one.
    public struct Summary: Sendable, Equatable {
        public var address: String
        public var refused: Int

        public init(address: String, refused: Int) {
            self.address = address
            self.refused = refused
        }
    }

    /// What `summaries(now:)` has to report.
    public struct Report: Sendable, Equatable {
        /// Addresses with refusals not reported yet, at most `summariesPerRound` of them.
        public var addresses: [Summary] = []
        /// Refusals of addresses beyond those, or evicted from the table, and how many addresses.
        public var otherAddresses = 0
        public var otherRefused = 0

        public var isEmpty: Bool { addresses.isEmpty && otherRefused == 0 }
    }

    /// A token bucket kept as credit in nanoseconds (a line costs one refill interval), so that
    /// refills are exact.
    private struct Bucket {
        var credit: UInt64
        var updated: UInt64

        init(burst: Int, interval: UInt64, now: UInt64) {
            credit = UInt64(burst) * interval
            updated = now
        }

        /// Takes one line when there is credit for it.
        mutating func take(now: UInt64, interval: UInt64, burst: Int) -> Bool {
            refill(now: now, interval: interval, burst: burst)
            guard credit >= interval else { return false }
            credit -= interval
            return true
        }

        mutating func refill(now: UInt64, interval: UInt64, burst: Int) {
            if now > updated { credit = min(UInt64(burst) * interval, credit + (now - updated)) }
            updated = max(updated, now)
        }

        func isFull(now: UInt64, interval: UInt64, burst: Int) -> Bool {
            var copy = self
            copy.refill(now: now, interval: interval, burst: burst)
            return copy.credit >= UInt64(burst) * interval
        }
    }

    private struct Entry {
        var bucket: Bucket
        var refused = 0
        var lastSummary: UInt64
        /// Its place in `order`, to tell it from an earlier entry of the same address.
        var sequence: UInt64
    }

    private struct Table {
        var entries: [String: Entry] = [:]
        /// Addresses in the order their entries were made, for eviction (stale ones are skipped).
        var order: [(address: String, sequence: UInt64)] = []
        var head = 0
        var nextSequence: UInt64 = 0
        var shared: Bucket
        /// Unreported refusals of evicted addresses, and how many addresses they were.
        var evictedRefused = 0
        var evictedAddresses = 0
    }

    public let configuration: Configuration
    private let table: Mutex<Table>

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        table = Mutex(
            Table(
                shared: Bucket(
                    burst: configuration.sharedBurst, interval: configuration.sharedRefillNanoseconds, now: 0)))
    }

    /// Records a failed handshake from `address` at `now` (monotonic nanoseconds).
    /// - Returns: true when it gets a log line of its own; false when it is throttled (counted
    ///   for the next summary instead).
    public func failed(address: String, now: UInt64) -> Bool {
        let configuration = self.configuration
        return table.withLock { table in
            var entry =
                table.entries[address] ?? Self.newEntry(in: &table, address: address, now: now, configuration)
            // The shared bucket is only asked when the address has credit, so one noisy address
            // does not spend the lines of the others.
            var logged = entry.bucket.take(
                now: now, interval: configuration.refillNanoseconds, burst: configuration.burst)
            if logged
                && !table.shared.take(
                    now: now, interval: configuration.sharedRefillNanoseconds, burst: configuration.sharedBurst)
            {
                entry.bucket.credit += configuration.refillNanoseconds // not spent after all
                logged = false
            }
            if !logged { entry.refused += 1 }
            table.entries[address] = entry
            return logged
        }
    }

    /// The refusals to report now: per address at most once per `summaryNanoseconds`. Also
    /// forgets addresses whose bucket is full again with nothing to report.
    public func summaries(now: UInt64) -> Report {
        let configuration = self.configuration
        return table.withLock { table in
            var report = Report(otherAddresses: table.evictedAddresses, otherRefused: table.evictedRefused)
            table.evictedAddresses = 0
            table.evictedRefused = 0
            var forgotten: [String] = []
            for (address, var entry) in table.entries {
                if entry.refused > 0 {
                    // Failures are stamped by every loop, the round by one: a stamp may be later than `now`.
                    guard now > entry.lastSummary, now - entry.lastSummary >= configuration.summaryNanoseconds else {
                        continue
                    }
                    if report.addresses.count < configuration.summariesPerRound {
                        report.addresses.append(Summary(address: address, refused: entry.refused))
                    } else {
                        report.otherAddresses += 1
                        report.otherRefused += entry.refused
                    }
                    entry.refused = 0
                    entry.lastSummary = now
                    table.entries[address] = entry
                } else if entry.bucket.isFull(
                    now: now, interval: configuration.refillNanoseconds, burst: configuration.burst)
                {
                    forgotten.append(address)
                }
            }
            for address in forgotten { table.entries[address] = nil }
            // Forgotten addresses leave stale places in `order`: drop them before they add up.
            if table.order.count - table.head > 2 * table.entries.count + 1_024 {
                table.order = table.order[table.head...].filter { table.entries[$0.address]?.sequence == $0.sequence }
                table.head = 0
            }
            report.addresses.sort { $0.address < $1.address }
            return report
        }
    }

    /// Addresses tracked now.
    public var trackedAddresses: Int { table.withLock { $0.entries.count } }

    private static func newEntry(in table: inout Table, address: String, now: UInt64, _ configuration: Configuration)
        -> Entry
    {
        while table.entries.count >= configuration.capacity, table.head < table.order.count {
            let oldest = table.order[table.head]
            table.head += 1
            guard let entry = table.entries[oldest.address], entry.sequence == oldest.sequence else { continue }
            table.entries[oldest.address] = nil
            if entry.refused > 0 {
                table.evictedRefused += entry.refused
                table.evictedAddresses += 1
            }
        }
        if table.head > 1_024 && table.head * 2 > table.order.count {
            table.order.removeFirst(table.head)
            table.head = 0
        }
        table.nextSequence += 1
        table.order.append((address, table.nextSequence))
        // The first summary of an address comes one interval after its first failure.
        return Entry(
            bucket: Bucket(burst: configuration.burst, interval: configuration.refillNanoseconds, now: now),
            lastSummary: now, sequence: table.nextSequence)
    }
}
