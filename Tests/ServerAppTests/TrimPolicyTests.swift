import Testing

@testable import ServerApp

/// When the heap trimmer trims: after a burst, every 30 s of steady work, never twice while idle.
@Suite("Heap trim policy")
struct TrimPolicyTests {
    /// Runs the policy over one activity count per second; the seconds (1-based) it trimmed at.
    static func trims(_ counts: [UInt64], policy: TrimPolicy = TrimPolicy()) -> [Int] {
        var state = TrimPolicy.State(activity: 0)
        return counts.enumerated().compactMap { second, count in
            policy.secondElapsed(&state, activity: count) ? second + 1 : nil
        }
    }

    @Test("an idle server is never trimmed")
    func idle() {
        #expect(Self.trims(Array(repeating: 0, count: 120)).isEmpty)
    }

    @Test("a burst is trimmed once, the first quiet second after it")
    func afterBurst() {
        let counts: [UInt64] = [10, 20, 30, 30, 30, 30, 30, 30]
        #expect(Self.trims(counts) == [4])
    }

    @Test("steady work is trimmed every 30 seconds, and once more when it stops")
    func steadyWork() {
        let working = (1...95).map { UInt64($0) }
        let counts = working + Array(repeating: 95, count: 10)
        #expect(Self.trims(counts) == [30, 60, 90, 96])
    }

    @Test("each short burst on a mostly idle server gets its one trim")
    func shortBursts() {
        var counts: [UInt64] = []
        var total: UInt64 = 0
        for second in 1...20 {
            if second % 5 == 0 { total += 1 }
            counts.append(total)
        }
        #expect(Self.trims(counts) == [6, 11, 16])
    }

    @Test("a longer quiet period before trimming")
    func quietSeconds() {
        let counts: [UInt64] = [5, 5, 5, 5, 9, 9, 9, 9]
        #expect(Self.trims(counts, policy: TrimPolicy(quietSeconds: 3)) == [4, 8])
    }
}
