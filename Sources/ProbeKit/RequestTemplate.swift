import ProtoSchema

/// `bench -d` read as a template: its text with ghz's call-data actions (`{{.RequestNumber}}`,
/// `{{.UUID}}`, `{{.TimestampUnix}}`, …, `{{newUUID}}`) and rpc-probe's `{{n}}`, parsed once and
/// rendered for each request bench makes before the load.
///
/// ghz evaluates a Go template for every call; bench encodes its requests before the load
/// (`BenchRequests`), so an action's value is the one of the request being made: request number
/// `k`, a fresh UUID, the time it was made. Only what ghz's templates name is an action: other text
/// between braces stays as written, as `{{n}}`-only templates always left it, and a `{{.Field}}`
/// ghz does not have is refused rather than sent as text.
struct RequestTemplate {
    /// A value put into the text.
    enum Action: Equatable {
        /// `{{n}}`: the variant number (rpc-probe's own, equal to the request number).
        case variant
        /// `{{.RequestNumber}}`: 0 for the first request, as in ghz.
        case requestNumber
        /// `{{.UUID}}`: a random (version 4) UUID, the same everywhere in one request.
        case uuid
        /// `{{newUUID}}`: a random UUID for each place it appears.
        case newUUID
        /// `{{.Timestamp}}`: RFC 3339, UTC (`2026-03-01T12:00:00Z`).
        case timestamp
        case timestampUnix
        case timestampUnixMilli
        case timestampUnixNano
        case fullyQualifiedName
        case methodName
        case serviceName
        case inputName
        case outputName

        /// ghz's `CallData` fields by name: what `{{.Name}}` may say.
        static let fields: [(name: String, action: Action)] = [
            ("RequestNumber", .requestNumber), ("UUID", .uuid), ("Timestamp", .timestamp),
            ("TimestampUnix", .timestampUnix), ("TimestampUnixMilli", .timestampUnixMilli),
            ("TimestampUnixNano", .timestampUnixNano), ("FullyQualifiedName", .fullyQualifiedName),
            ("MethodName", .methodName), ("ServiceName", .serviceName), ("InputName", .inputName),
            ("OutputName", .outputName),
        ]

        /// True when the value differs from one request to the next, so that requests are meant
        /// to differ and sending one twice is worth reporting.
        var variesPerRequest: Bool {
            switch self {
            case .variant, .fullyQualifiedName, .methodName, .serviceName, .inputName, .outputName: false
            case .requestNumber, .uuid, .newUUID, .timestamp, .timestampUnix, .timestampUnixMilli,
                .timestampUnixNano:
                true
            }
        }
    }

    enum Part: Equatable {
        case text(String)
        case action(Action)
    }

    let parts: [Part]

    /// Reads `text`.
    /// - Throws: a usage error for a `{{.Field}}` ghz does not have, or a ghz template function
    ///   rpc-probe has not (`randomString`, `randomInt`), naming what it has.
    init(_ text: String) throws(ProbeError) {
        var parts: [Part] = []
        var literal = ""
        var rest = text[...]
        while let open = rest.firstRange(of: "{{") {
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else { break }
            let inside = rest[open.upperBound..<close.lowerBound]
            literal += rest[..<open.lowerBound]
            if let action = try Self.action(inside) {
                if !literal.isEmpty { parts.append(.text(literal)) }
                literal = ""
                parts.append(.action(action))
            } else {
                literal += rest[open.lowerBound..<close.upperBound]
            }
            rest = rest[close.upperBound...]
        }
        literal += rest
        if !literal.isEmpty { parts.append(.text(literal)) }
        self.parts = parts
    }

    /// The action `inside` a pair of braces names; nil for text that is not one.
    private static func action(_ inside: Substring) throws(ProbeError) -> Action? {
        let words = inside.split(separator: " ")
        guard let word = words.first else { return nil }
        if words.count == 1 && word == "n" { return .variant }
        if word.hasPrefix(".") {
            let name = word.dropFirst()
            guard words.count == 1, let field = Action.fields.first(where: { $0.name == name }) else {
                throw .usage(
                    "bench: -d: {{\(inside)}} is not a field of ghz's call data; the fields are "
                        + Action.fields.map { ".\($0.name)" }.joined(separator: ", "))
            }
            return field.action
        }
        if words.count == 1 && word == "newUUID" { return .newUUID }
        if ["randomString", "randomInt", "newUUID"].contains(word) {
            throw .usage(
                "bench: -d: {{\(inside)}} is a ghz template function rpc-probe does not have; "
                    + "{{.RequestNumber}} and {{.UUID}} make every request different")
        }
        return nil
    }

    /// True when any action's value differs from one request to the next.
    var variesPerRequest: Bool { actions.contains { $0.variesPerRequest } }

    /// True when the text has any action at all.
    var hasActions: Bool { !actions.isEmpty }

    private var actions: [Action] {
        parts.compactMap { part in
            if case .action(let action) = part { return action }
            return nil
        }
    }

    /// The text of request `number` of `method`, its UUIDs drawn from `random`.
    func render(number: Int, method: MethodDescriptor, random: inout some RandomNumberGenerator) -> String {
        let now = WallClock.now()
        var requestUUID: String?
        var text = ""
        for part in parts {
            switch part {
            case .text(let literal): text += literal
            case .action(let action):
                switch action {
                case .variant, .requestNumber: text += String(number)
                case .uuid:
                    let uuid = requestUUID ?? Self.uuid(&random)
                    requestUUID = uuid
                    text += uuid
                case .newUUID: text += Self.uuid(&random)
                case .timestamp: text += WallClock.rfc3339(seconds: now.seconds)
                case .timestampUnix: text += String(now.seconds)
                case .timestampUnixMilli: text += String(now.seconds * 1_000 + now.nanoseconds / 1_000_000)
                case .timestampUnixNano: text += String(now.seconds * 1_000_000_000 + now.nanoseconds)
                case .fullyQualifiedName: text += method.fullName
                case .methodName: text += method.name
                case .serviceName: text += method.service.name
                case .inputName: text += method.inputType.name
                case .outputName: text += method.outputType.name
                }
            }
        }
        return text
    }

    /// A random version 4 UUID, `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` in lowercase hex.
    static func uuid(_ random: inout some RandomNumberGenerator) -> String {
        var bytes: [UInt8] = []
        for _ in 0..<2 {
            let word = random.next()
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        bytes[6] = bytes[6] & 0x0F | 0x40 // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80 // the RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
