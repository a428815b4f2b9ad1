import ByteCoding
import NameSuggestion

/// Reads proto3 JSON (https://protobuf.dev/programming-guides/proto3/#json) into dynamic messages.
///
/// Accepts what the canonical mapping accepts: proto or JSON field names, enum names or numbers,
/// 64-bit integers as strings or numbers (exact, range-checked), other integers also as numeric
/// strings, base64 in either alphabet with or without padding, "NaN"/"Infinity"/"-Infinity",
/// `null` for a default. Every refusal names the field by its path from the top-level message
/// (`members[2].scope`, `metadata["k"]`) and says what was expected and what was found.
struct JSONMessageDecoder {
    private let options: JSONParseOptions
    private let topLevel: String
    /// The path to the value being read, one component per field, index or key.
    private var path: [String] = []

    private init(options: JSONParseOptions, topLevel: String) {
        self.options = options
        self.topLevel = topLevel
    }

    static func decode(
        _ json: JSONValue, as descriptor: MessageDescriptor, options: JSONParseOptions
    ) throws(ProtoSchemaError) -> DynamicMessage {
        var decoder = JSONMessageDecoder(options: options, topLevel: descriptor.fullName)
        return try decoder.message(json, descriptor: descriptor, depth: 0)
    }

    // MARK: - Messages

    private mutating func message(_ json: JSONValue, descriptor: MessageDescriptor, depth: Int) throws(ProtoSchemaError)
        -> DynamicMessage
    {
        guard case .object(let members) = json else {
            throw error("expected an object for \(descriptor.fullName), got \(json.summary)")
        }
        guard depth <= options.maximumDepth else {
            throw error("messages nested more than \(options.maximumDepth) deep")
        }
        let info = descriptor.info
        var message = DynamicMessage(descriptor)
        var keyOfField: [Int: String] = [:]
        var keyOfOneof: [Int: String] = [:]
        for (key, value) in members {
            guard let index = info.fieldByJSONName[key] ?? info.fieldByName[key] else {
                if options.ignoreUnknownFields { continue }
                throw unknownField(key, in: info)
            }
            if let earlier = keyOfField[index] {
                let also = earlier == key ? "" : " (also as \(JSONWriter.quoted(earlier)))"
                throw ProtoSchemaError(
                    code: .invalidJSONValue,
                    message: "field \"\(pathText(path + [key]))\" of \(topLevel) is given twice\(also)")
            }
            keyOfField[index] = key
            if case .null = value { continue } // null: the field keeps its default
            let field = info.fields[index]
            if let oneof = field.oneofIndex, !info.oneofs[oneof].isSynthetic {
                if let other = keyOfOneof[oneof] {
                    throw error(
                        "fields \(JSONWriter.quoted(other)) and \(JSONWriter.quoted(key)) are both members of oneof "
                            + "\(JSONWriter.quoted(info.oneofs[oneof].name)); set at most one")
                }
                keyOfOneof[oneof] = key
            }
            path.append(key)
            let decoded = try fieldValue(value, field: field, storage: descriptor.storage, depth: depth)
            path.removeLast()
            message.store(decoded, at: index)
        }
        return message
    }

    private func unknownField(_ key: String, in info: SchemaStorage.MessageInfo) -> ProtoSchemaError {
        let names = info.fields.flatMap { $0.name == $0.jsonName ? [$0.jsonName] : [$0.jsonName, $0.name] }
        let hint = Suggestion.hint(for: key, among: names, quote: JSONWriter.quoted)
        let location = path.isEmpty ? "" : " at \"\(pathText(path))\" of \(topLevel)"
        return ProtoSchemaError(
            code: .invalidJSONValue,
            message: "unknown field \(JSONWriter.quoted(key)) in \(info.fullName)\(location)\(hint)")
    }

    // MARK: - Fields

    private mutating func fieldValue(
        _ json: JSONValue, field: SchemaStorage.FieldInfo, storage: SchemaStorage, depth: Int
    ) throws(ProtoSchemaError) -> ProtoValue {
        if field.isMap {
            guard case .object(let members) = json else {
                throw error("expected an object (a map), got \(json.summary)")
            }
            let entry = storage.messages[field.messageIndex!]
            let keyField = entry.fields[entry.fieldByNumber[1]!]
            let valueField = entry.fields[entry.fieldByNumber[2]!]
            var map: [MapKey: ProtoValue] = [:]
            for (keyText, value) in members {
                path.append("[\(JSONWriter.quoted(keyText))]")
                let key = try mapKey(keyText, type: keyField.type)
                guard map[key] == nil else { throw error("map key given twice") }
                if case .null = value { throw error("a map value cannot be null") }
                map[key] = try single(value, field: valueField, storage: storage, depth: depth)
                path.removeLast()
            }
            return .map(map)
        }
        if field.isRepeated {
            guard case .array(let elements) = json else { throw error("expected an array, got \(json.summary)") }
            var list: [ProtoValue] = []
            list.reserveCapacity(elements.count)
            for (i, element) in elements.enumerated() {
                path.append("[\(i)]")
                if case .null = element { throw error("an array element cannot be null") }
                list.append(try single(element, field: field, storage: storage, depth: depth))
                path.removeLast()
            }
            return .list(list)
        }
        return try single(json, field: field, storage: storage, depth: depth)
    }

    private mutating func single(
        _ json: JSONValue, field: SchemaStorage.FieldInfo, storage: SchemaStorage, depth: Int
    ) throws(ProtoSchemaError) -> ProtoValue {
        switch field.type {
        case .message:
            let descriptor = MessageDescriptor(storage: storage, index: field.messageIndex!)
            return .message(try message(json, descriptor: descriptor, depth: depth + 1))
        case .group:
            throw error("proto2 groups are not supported")
        case .enum:
            return try enumValue(json, info: storage.enums[field.enumIndex!])
        case .string:
            guard case .string(let string) = json else { throw error("expected a string, got \(json.summary)") }
            return .string(string)
        case .bytes:
            guard case .string(let text) = json else { throw error("expected a base64 string, got \(json.summary)") }
            return .bytes(try bytes(text))
        case .bool:
            guard case .bool(let value) = json else { throw error("expected true or false, got \(json.summary)") }
            return .bool(value)
        case .float, .double:
            return try floatingPoint(json, type: field.type)
        case .int32, .sint32, .sfixed32, .int64, .sint64, .sfixed64, .uint32, .fixed32, .uint64, .fixed64:
            let literal: String
            switch json {
            case .number(let text): literal = text
            case .string(let text) where JSONParser.isNumberLiteral(text): literal = text
            default: throw error("expected a number, got \(json.summary)")
            }
            return try integer(literal, type: field.type, found: json)
        }
    }

    private func enumValue(_ json: JSONValue, info: SchemaStorage.EnumInfo) throws(ProtoSchemaError) -> ProtoValue {
        switch json {
        case .string(let name):
            if let index = info.valueByName[name] { return .enumNumber(info.values[index].number) }
            let names = info.values.map(\.name)
            let hint = Suggestion.hint(for: name, among: names, quote: JSONWriter.quoted)
            throw error(
                "\(JSONWriter.quoted(name)) is not a value of enum \(info.fullName)\(hint); its values: "
                    + names.joined(separator: ", "))
        case .number(let literal):
            guard case .int32(let number) = try integer(literal, type: .int32, found: json) else {
                preconditionFailure("an int32 conversion returns an int32")
            }
            return .enumNumber(number)
        default:
            throw error("expected the name or number of a \(info.fullName) value, got \(json.summary)")
        }
    }

    private func mapKey(_ text: String, type: FieldType) throws(ProtoSchemaError) -> MapKey {
        switch type {
        case .string: return .string(text)
        case .bool:
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: throw error("expected a bool map key (\"true\" or \"false\"), got \(JSONWriter.quoted(text))")
            }
        default:
            guard JSONParser.isNumberLiteral(text) else {
                throw error("expected an integer map key, got \(JSONWriter.quoted(text))")
            }
            return MapKey(try integer(text, type: type, found: .string(text)))!
        }
    }

    /// Converts an integer literal exactly, checking the range of `type`.
    private func integer(_ literal: String, type: FieldType, found: JSONValue) throws(ProtoSchemaError) -> ProtoValue {
        let negative: Bool
        let magnitude: UInt64
        switch JSONNumber.integer(literal) {
        case .value(let isNegative, let value):
            negative = isNegative
            magnitude = value
        case .notAnInteger:
            throw error("expected an integer, got \(found.summary)")
        case .tooLarge:
            throw error("\(literal) is out of range for \(type)")
        }
        func outOfRange() -> ProtoSchemaError { error("\(literal) is out of range for \(type)") }
        switch type {
        case .int32, .sint32, .sfixed32, .enum:
            guard magnitude <= (negative ? UInt64(Int32.max) + 1 : UInt64(Int32.max)) else { throw outOfRange() }
            return .int32(negative ? Int32(truncatingIfNeeded: 0 &- magnitude) : Int32(magnitude))
        case .int64, .sint64, .sfixed64:
            guard magnitude <= (negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)) else { throw outOfRange() }
            return .int64(negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude))
        case .uint32, .fixed32:
            guard !negative || magnitude == 0, magnitude <= UInt64(UInt32.max) else { throw outOfRange() }
            return .uint32(UInt32(magnitude))
        default:
            guard !negative || magnitude == 0 else { throw outOfRange() }
            return .uint64(magnitude)
        }
    }

    /// Base64 as the canonical mapping accepts it: either alphabet (even mixed), padded or not.
    private func bytes(_ text: String) throws(ProtoSchemaError) -> [UInt8] {
        do throws(Base64.Failure) {
            return try Base64.decode(text, accepting: [.standard, .urlSafe], padding: .optional)
        } catch {
            let reason =
                switch error {
                case .padding: "wrong padding"
                case .length: "length \(text.utf8.count) is not a whole number of base64 groups"
                case .character(let byte, let offset):
                    "character \(JSONWriter.quoted(String(decoding: [byte], as: UTF8.self))) at position \(offset + 1)"
                case .nonzeroPadBits: "nonzero pad bits" // only refused with `canonical: true`, not asked for here
                }
            throw self.error("invalid base64: \(reason)")
        }
    }

    private func floatingPoint(_ json: JSONValue, type: FieldType) throws(ProtoSchemaError) -> ProtoValue {
        let literal: String
        switch json {
        case .number(let text): literal = text
        case .string("NaN"): return type == .float ? .float(.nan) : .double(.nan)
        case .string("Infinity"): return type == .float ? .float(.infinity) : .double(.infinity)
        case .string("-Infinity"): return type == .float ? .float(-.infinity) : .double(-.infinity)
        case .string(let text) where JSONParser.isNumberLiteral(text): literal = text
        default: throw error("expected a number, got \(json.summary)")
        }
        guard let double = Double(literal), double.isFinite else {
            throw error("\(literal) is out of range for \(type)")
        }
        if type == .double { return .double(double) }
        // Float's own parse rounds correctly (via Double it could round twice); a value that
        // rounds beyond the largest float comes back infinite.
        guard let float = Float(literal), float.isFinite else {
            throw error("\(literal) is out of range for float")
        }
        return .float(float)
    }

    // MARK: - Errors

    /// An error about the value at the current path.
    private func error(_ reason: String) -> ProtoSchemaError {
        let message = path.isEmpty ? "\(topLevel): \(reason)" : "field \"\(pathText(path))\" of \(topLevel): \(reason)"
        return ProtoSchemaError(code: .invalidJSONValue, message: message)
    }

    /// The path as people write it: `members[2].scope`, `metadata["k"]` (not JSON-escaped, so
    /// the quotes of map keys stay readable inside the quoted path).
    private func pathText(_ components: [String]) -> String {
        var text = ""
        for component in components {
            if !text.isEmpty && !component.hasPrefix("[") { text += "." }
            text += component
        }
        return text
    }
}
