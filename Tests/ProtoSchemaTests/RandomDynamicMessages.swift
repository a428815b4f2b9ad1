import ProtoSchema
import SeededRandom
import TestSupport

/// Random dynamic messages of any descriptor, with the awkward values of every scalar type
/// (extremes, -0.0, NaN, infinities, non-ASCII and control characters), for the hand-built
/// schema that the generated types (and so `RandomMessages`) do not cover.
struct RandomDynamicMessages {
    private var rng: SplitMix64
    /// Whether strings may hold NUL, which the generated types refuse (protobuf-c keeps strings
    /// as C strings).
    private let allowsNUL: Bool

    init(seed: UInt64, allowsNUL: Bool = true) {
        rng = SplitMix64(seed: seed)
        self.allowsNUL = allowsNUL
    }

    mutating func message(_ descriptor: MessageDescriptor, depth: Int = 3) -> DynamicMessage {
        var message = DynamicMessage(descriptor)
        for field in descriptor.fields where Int.random(in: 0..<3, using: &rng) != 0 {
            let value: ProtoValue?
            if field.isMap {
                var entries: [MapKey: ProtoValue] = [:]
                for _ in 0..<Int.random(in: 0...3, using: &rng) {
                    guard let keyValue = single(field.mapKey!, depth: depth), let key = MapKey(keyValue),
                        let entry = single(field.mapValue!, depth: depth)
                    else { continue }
                    entries[key] = entry
                }
                value = .map(entries)
            } else if field.isRepeated {
                value = .list((0..<Int.random(in: 0...3, using: &rng)).compactMap { _ in single(field, depth: depth) })
            } else {
                value = single(field, depth: depth)
            }
            if let value {
                do {
                    try message.set(field, to: value)
                } catch {
                    preconditionFailure("generated a value that does not fit: \(error)")
                }
            }
        }
        return message
    }

    private mutating func single(_ field: FieldDescriptor, depth: Int) -> ProtoValue? {
        switch field.type {
        case .bool: return .bool(Bool.random(using: &rng))
        case .int32, .sint32, .sfixed32:
            return .int32(pick([0, 1, -1, .max, .min, Int32.random(in: .min ... .max, using: &rng)]))
        case .int64, .sint64, .sfixed64:
            return .int64(pick([0, 1, -1, .max, .min, 1 << 53 + 1, Int64.random(in: .min ... .max, using: &rng)]))
        case .uint32, .fixed32: return .uint32(pick([0, 1, .max, UInt32.random(in: 0 ... .max, using: &rng)]))
        case .uint64, .fixed64: return .uint64(pick([0, 1, .max, UInt64.random(in: 0 ... .max, using: &rng)]))
        case .float:
            return .float(
                pick([
                    0, -0.0, 1.5, -1e-7, .nan, .infinity, -.infinity, .greatestFiniteMagnitude,
                    .leastNonzeroMagnitude, 16_777_216, randomFloat(),
                ]))
        case .double:
            return .double(
                pick([
                    0, -0.0, 0.1, 1e300, -1e-300, .nan, .infinity, -.infinity, 123_456_789_012_345,
                    .leastNonzeroMagnitude, randomDouble(),
                ]))
        case .string:
            return .string(
                pick([
                    "", "a", "Ünïcödé 日本語 🙂", "quote \" backslash \\ slash /",
                    allowsNUL ? "\n\t\u{0}\u{1F}" : "\n\t\u{1}\u{1F}\u{7F}\r\u{8}\u{C}",
                    "\u{2028}",
                ]))
        case .bytes:
            return .bytes((0..<Int.random(in: 0...7, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        case .enum:
            let numbers = field.enumType!.values.map(\.number) + [99]
            return .enumNumber(pick(numbers))
        case .message:
            guard depth > 0 else { return nil }
            return .message(message(field.messageType!, depth: depth - 1))
        case .group: return nil
        }
    }

    /// Any float but a NaN with a payload: JSON has one NaN, so only the canonical one survives it.
    private mutating func randomFloat() -> Float {
        let value = Float(bitPattern: UInt32.random(in: 0 ... .max, using: &rng))
        return value.isNaN ? .nan : value
    }

    private mutating func randomDouble() -> Double {
        let value = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng))
        return value.isNaN ? .nan : value
    }

    private mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int.random(in: 0..<choices.count, using: &rng)]
    }
}
