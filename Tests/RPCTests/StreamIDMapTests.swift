import SeededRandom
import TestSupport
import Testing

@testable import RPCCore

/// The session's live-call table against `Dictionary`, the model it replaces.
@Suite("StreamIDMap: a session's live calls, as a Dictionary would hold them")
struct StreamIDMapTests {
    static func expectSame(_ map: StreamIDMap<Int>, _ model: [UInt32: Int], _ context: String) {
        #expect(map.count == model.count, "\(context): count")
        #expect(map.isEmpty == model.isEmpty, "\(context): isEmpty")
        var seen: [UInt32: Int] = [:]
        for (streamID, value) in map {
            #expect(seen.updateValue(value, forKey: streamID) == nil, "\(context): \(streamID) iterated twice")
        }
        #expect(seen == model, "\(context): iteration")
        #expect(map.values.sorted() == model.values.sorted(), "\(context): values")
    }

    @Test(
        "operations one by one",
        arguments: [
            ("insert, then find", [("+", 5, 50)], [5: 50]),
            ("replace a value", [("+", 5, 50), ("+", 5, 51)], [5: 51]),
            ("remove the only one", [("+", 5, 50), ("-", 5, 0)], [:]),
            ("remove one never there", [("+", 5, 50), ("-", 7, 0)], [5: 50]),
            (
                "grow past the first capacity", (1...20).map { ("+", $0, $0 * 10) },
                Dictionary(uniqueKeysWithValues: (1...20).map { (UInt32($0), $0 * 10) })
            ),
            ("largest id", [("+", Int(UInt32.max), 1)], [UInt32.max: 1]),
        ] as [(String, [(String, Int, Int)], [UInt32: Int])])
    func oneByOne(_ name: String, _ operations: [(String, Int, Int)], _ expected: [UInt32: Int]) {
        var map = StreamIDMap<Int>()
        for (operation, key, value) in operations {
            if operation == "+" { map[UInt32(key)] = value } else { map.removeValue(forKey: UInt32(key)) }
        }
        Self.expectSame(map, expected, name)
        for (key, value) in expected {
            #expect(map[key] == value && map.contains(key), "\(name): \(key)")
        }
    }

    @Test("random inserts, replacements and removals agree with a Dictionary at every step", arguments: [1, 2, 3, 4])
    func randomAgainstDictionary(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var map = StreamIDMap<Int>()
        var model: [UInt32: Int] = [:]
        var nextID: UInt32 = 1
        for step in 0..<20_000 {
            let roll = Int.random(in: 0..<100, using: &generator)
            // Ids come as a client opens streams (increasing, odd or not), over a window of live
            // ones, with a few far away; removals pick live ids and some that are not there.
            if roll < 45 {
                let key: UInt32 =
                    roll < 40 ? nextID : UInt32.random(in: 1...UInt32.max, using: &generator)
                nextID &+= UInt32.random(in: 1...3, using: &generator)
                if nextID == 0 { nextID = 1 }
                let value = step
                map[key] = value
                model[key] = value
            } else if roll < 90, let key = model.keys.randomElement(using: &generator) {
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key), "step \(step)")
            } else {
                let key = UInt32.random(in: 1...nextID, using: &generator)
                #expect(map[key] == model[key], "step \(step): lookup \(key)")
                #expect(map.contains(key) == (model[key] != nil), "step \(step): contains \(key)")
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key), "step \(step)")
            }
            if step % 997 == 0 { Self.expectSame(map, model, "seed \(seed), step \(step)") }
        }
        Self.expectSame(map, model, "seed \(seed), end")
        for key in model.keys { #expect(map[key] == model[key]) }
    }

    @Test("keys that share a home slot, removed from the middle of their run and across the table's end")
    func collidingRuns() {
        // 8 slots: find keys by their home slot, so that runs wrap from slot 7 to slot 0.
        var map = StreamIDMap<Int>()
        map[1] = 1 // the first insertion sizes the table at 8 slots
        map.removeValue(forKey: 1)
        var byHome: [Int: [UInt32]] = [:]
        var key: UInt32 = 1
        while byHome[7, default: []].count < 3 || byHome[6, default: []].count < 1 || byHome[0, default: []].count < 1 {
            let home = Int((key &* 0x9E37_79B1) >> 29)
            byHome[home, default: []].append(key)
            key += 1
        }
        let keys = [byHome[6]![0], byHome[7]![0], byHome[7]![1], byHome[7]![2], byHome[0]![0]]
        var model: [UInt32: Int] = [:]
        for (index, key) in keys.enumerated() {
            map[key] = index
            model[key] = index
        }
        for key in [keys[1], keys[0], keys[3], keys[4], keys[2]] {
            #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key))
            Self.expectSame(map, model, "after removing \(key)")
            for left in model.keys { #expect(map[left] == model[left], "\(left) still found") }
        }
    }

    @Test("iterating a copy while the original changes sees the copy's entries")
    func iterationOverACopy() {
        var map = StreamIDMap<Int>()
        for id in UInt32(1)...10 { map[id] = Int(id) }
        var visited = 0
        for (streamID, _) in map where streamID % 2 == 0 {
            map.removeValue(forKey: streamID)
            visited += 1
        }
        #expect(visited == 5 && map.count == 5)
        map.removeAll()
        #expect(map.isEmpty && map[3] == nil)
    }
}
