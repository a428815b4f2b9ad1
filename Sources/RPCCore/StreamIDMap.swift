/// A map from stream id to a value: a session's live calls.
///
/// Why not a `Dictionary`: a fan-out's run of messages asks the session, for every message,
/// whether its stream is still live, and hashing a `UInt32` with the standard library's seeded
/// SipHash cost more than writing the message's frame header. This table hashes by one
/// multiplication (Fibonacci hashing: stream ids come in increasing runs, which it spreads),
/// probes linearly and deletes by shifting the entries after the hole back, so no tombstones
/// build up on a connection that opens and ends calls for hours.
///
/// Stream 0 is never a call's (a CALL on it is a protocol violation), so 0 marks an empty slot.
/// Like `Dictionary`, a value type: iterating a copy while the original changes is safe.
public struct StreamIDMap<Value> {
    /// Slot keys, 0 for empty; `slotKeys.count` is 0 or a power of two.
    @usableFromInline var slotKeys: [UInt32] = []
    @usableFromInline var slotValues: [Value?] = []
    @usableFromInline var storedCount = 0

    /// Entries in the map.
    @inlinable public var count: Int { storedCount }
    /// log2 of the capacity, for taking the hash's top bits.
    @usableFromInline var bits = 0

    /// An empty map (it takes storage at its first insertion).
    public init() {}

    /// The most entries kept per slot: past three quarters, probes get long.
    @usableFromInline static var maxLoad: Double { 0.75 }
    /// The first capacity, taken on the first insertion (an idle connection holds none).
    @usableFromInline static var initialBits: Int { 3 }

    @inlinable public var isEmpty: Bool { count == 0 }

    /// The slot where `key`'s probe starts.
    @inlinable func home(of key: UInt32) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B1) >> UInt32(32 - bits))
    }

    /// The slot holding `key`, or nil.
    @inlinable func slot(of key: UInt32) -> Int? {
        guard count > 0 else { return nil }
        let mask = slotKeys.count - 1
        var index = home(of: key)
        while true {
            let found = slotKeys[index]
            if found == key { return index }
            if found == 0 { return nil }
            index = (index + 1) & mask
        }
    }

    @inlinable public func contains(_ key: UInt32) -> Bool { slot(of: key) != nil }

    @inlinable public subscript(key: UInt32) -> Value? {
        get { slot(of: key).flatMap { slotValues[$0] } }
        set {
            if let newValue {
                insert(key, newValue)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    @inlinable mutating func insert(_ key: UInt32, _ value: Value) {
        precondition(key != 0, "stream 0 is never a call's")
        if let index = slot(of: key) {
            slotValues[index] = value
            return
        }
        if Double(count + 1) > Double(slotKeys.count) * Self.maxLoad { grow() }
        let mask = slotKeys.count - 1
        var index = home(of: key)
        while slotKeys[index] != 0 { index = (index + 1) & mask }
        slotKeys[index] = key
        slotValues[index] = value
        storedCount += 1
    }

    /// Lets `body` change the value of `key` in place (no copy out and back); nil when absent.
    @inlinable
    public mutating func modify<R>(_ key: UInt32, _ body: (inout Value) -> R) -> R? {
        guard let index = slot(of: key) else { return nil }
        return body(&slotValues[index]!)
    }

    @discardableResult @inlinable
    public mutating func removeValue(forKey key: UInt32) -> Value? {
        guard var hole = slot(of: key) else { return nil }
        let removed = slotValues[hole]
        let mask = slotKeys.count - 1
        // Backward shift: each entry after the hole, up to the next empty slot, moves into the
        // hole unless its home lies cyclically after the hole, i.e. closer to it than the hole
        // is (then the hole does not cut its probe path).
        var next = (hole + 1) & mask
        while slotKeys[next] != 0 {
            let stays = (next - home(of: slotKeys[next])) & mask < (next - hole) & mask
            if !stays {
                slotKeys[hole] = slotKeys[next]
                slotValues[hole] = slotValues[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slotKeys[hole] = 0
        slotValues[hole] = nil
        storedCount -= 1
        return removed
    }

    /// Empties the map and gives its storage back.
    public mutating func removeAll() {
        slotKeys = []
        slotValues = []
        storedCount = 0
        bits = 0
    }

    /// The values, in no particular order.
    public var values: [Value] { slotValues.compactMap { $0 } }

    @usableFromInline mutating func grow() {
        let oldKeys = slotKeys
        let oldValues = slotValues
        bits = bits == 0 ? Self.initialBits : bits + 1
        slotKeys = [UInt32](repeating: 0, count: 1 << bits)
        slotValues = [Value?](repeating: nil, count: 1 << bits)
        storedCount = 0
        for index in oldKeys.indices where oldKeys[index] != 0 {
            insert(oldKeys[index], oldValues[index]!)
        }
    }
}

extension StreamIDMap: Sequence {
    public struct Iterator: IteratorProtocol {
        fileprivate let keys: [UInt32]
        fileprivate let values: [Value?]
        fileprivate var index = 0

        public mutating func next() -> (streamID: UInt32, value: Value)? {
            while index < keys.count {
                defer { index += 1 }
                if keys[index] != 0, let value = values[index] { return (keys[index], value) }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(keys: slotKeys, values: slotValues) }

    public var underestimatedCount: Int { count }
}
