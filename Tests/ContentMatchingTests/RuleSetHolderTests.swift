import ContentMatching
import Synchronization
import Testing
import ThreadSupport

/// The holder compiles on its own thread and swaps the new set in: scans meanwhile answer with
/// the old set, then with the new one, never anything else.
@Suite("Rule set holder")
struct RuleSetHolderTests {
    @Test("Scans on several threads keep the old set until the swap, then the new one")
    func swapUnderScans() throws {
        let holder = RuleSetHolder(name: "ct-compile")
        defer { holder.close() }
        let first = holder.update([ContentRule(id: 1, kind: .word, pattern: "alpha")])
        let old = try #require(holder.waitForVersion(first, timeout: .seconds(30)))
        #expect(old.rules.map(\.id) == [1])

        let oldAnswer = [ContentMatch(ruleID: 1, start: 0, end: 5)]
        let newAnswer = [ContentMatch(ruleID: 2, start: 6, end: 10)]
        let stop = Atomic(false)
        let wrong = Atomic(0)
        let backwards = Atomic(0)
        let oldScans = Atomic(0)
        let newScans = Atomic(0)
        let threads = (0..<3).map { index in
            WorkerThread(name: "ct-scan-\(index)") {
                let scanner = ContentScanner()
                var sawNew = false
                while !stop.load(ordering: .relaxed) {
                    let matches = scanner.scan("alpha beta", with: holder.ruleSet)
                    if matches == oldAnswer {
                        oldScans.add(1, ordering: .relaxed)
                        if sawNew { backwards.add(1, ordering: .relaxed) }
                    } else if matches == newAnswer {
                        newScans.add(1, ordering: .relaxed)
                        sawNew = true
                    } else {
                        wrong.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        // A set slow enough to compile that the scans run meanwhile.
        var random = SplitMix64(seed: 5)
        var rules = (10..<3_010).map { index in
            ContentRule(id: UInt64(index), kind: .word, pattern: RandomText.pattern(index: index, using: &random))
        }
        rules.append(ContentRule(id: 2, kind: .word, pattern: "beta"))
        let clock = ContinuousClock()
        let start = clock.now
        let second = holder.update(rules)
        #expect(holder.ruleSet === old)
        let scansBefore = oldScans.load(ordering: .relaxed)
        let new = try #require(holder.waitForVersion(second, timeout: .seconds(120)))
        let compileTime = clock.now - start
        let scansDuring = oldScans.load(ordering: .relaxed) - scansBefore
        #expect(new.rules.count == 3_001)
        #expect(holder.ruleSet === new)
        let newBefore = newScans.load(ordering: .relaxed)
        while newScans.load(ordering: .relaxed) < newBefore + 100 {}
        stop.store(true, ordering: .relaxed)
        for thread in threads { thread.join() }
        print("compile took \(compileTime); \(scansDuring) scans answered with the old set meanwhile")
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(backwards.load(ordering: .relaxed) == 0)
        #expect(scansDuring > 0)
        #expect(holder.lastFailure == nil)
    }

    @Test("Updates made while a compile runs are coalesced: the latest list wins")
    func latestWins() throws {
        let holder = RuleSetHolder(name: "ct-latest")
        defer { holder.close() }
        var last: UInt64 = 0
        for index in 1...20 {
            last = holder.update([ContentRule(id: UInt64(index), kind: .word, pattern: "w\(index)")])
        }
        let set = try #require(holder.waitForVersion(last, timeout: .seconds(30)))
        #expect(set.rules.map(\.id) == [20])
        #expect(ContentScanner().scan("w19 w20", with: holder.ruleSet).map(\.ruleID) == [20])
    }

    @Test("Refused rules are left out of the swapped-in set, which lists them")
    func refusedRulesListed() throws {
        let holder = RuleSetHolder(name: "ct-refused")
        defer { holder.close() }
        let version = holder.update([
            ContentRule(id: 1, kind: .regex, pattern: "(a)\\1"), ContentRule(id: 2, kind: .word, pattern: "ok"),
        ])
        let set = try #require(holder.waitForVersion(version, timeout: .seconds(30)))
        #expect(set.rules.map(\.id) == [2])
        #expect(set.errors.map(\.ruleID) == [1])
    }

    @Test("After close, waiting gives up at once and the last set stays readable")
    func close() {
        let holder = RuleSetHolder(name: "ct-close")
        holder.close()
        let version = holder.update([ContentRule(id: 1, kind: .word, pattern: "late")])
        #expect(holder.waitForVersion(version, timeout: .seconds(1)) == nil)
        #expect(holder.ruleSet.rules.isEmpty)
        holder.close()
    }
}
