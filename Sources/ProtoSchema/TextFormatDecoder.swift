import ByteCoding

/// Fits text format (`TextFormatParser`'s fields) to a message type, by restating it as the
/// proto3 JSON it means and reading that with `JSONMessageDecoder` — so both formats refuse the
/// same things with the same messages (an unknown field with the closest name, a value out of
/// range, an enum name the enum does not have), and there is one decoder of values to trust.
///
/// What differs is only how values are written: bytes as escaped strings (restated as base64),
/// the repeated entries of a map field (restated as one object), several occurrences of a
/// repeated field (restated as one array), `inf` and `nan` (restated as "Infinity", "NaN").
enum TextFormatDecoder {
    static func decode(_ text: String, as descriptor: MessageDescriptor, maximumDepth: Int) throws(ProtoSchemaError)
        -> DynamicMessage
    {
        let fields = try TextFormatParser.parse(text, maximumDepth: maximumDepth)
        let json = try object(fields, info: descriptor.info, storage: descriptor.storage)
        var options = JSONParseOptions()
        options.maximumDepth = maximumDepth
        do throws(ProtoSchemaError) {
            return try JSONMessageDecoder.decode(json, as: descriptor, options: options)
        } catch {
            throw ProtoSchemaError(code: .invalidTextFormat, message: error.message)
        }
    }

    /// A member of a JSON object.
    private typealias Member = (key: String, value: JSONValue)

    /// A message's fields as a JSON object: a repeated or map field's occurrences joined into one
    /// member where it first appears, any other field once per occurrence (so that the JSON
    /// decoder refuses one given twice).
    private static func object(
        _ fields: [TextFormatParser.Field], info: SchemaStorage.MessageInfo, storage: SchemaStorage
    ) throws(ProtoSchemaError) -> JSONValue {
        var members: [Member] = []
        var joined: [Int: Int] = [:] // field index → its member
        for field in fields {
            guard let index = info.fieldByName[field.name] ?? info.fieldByJSONName[field.name] else {
                // Unknown: the JSON decoder names it, with the closest known name.
                members.append((field.name, .null))
                continue
            }
            let fieldInfo = info.fields[index]
            var elements = [field.value]
            if case .list(let list) = field.value {
                guard fieldInfo.isRepeated else {
                    throw failure(field, "a list [ … ] for \(fieldInfo.name), which is not repeated")
                }
                elements = list
            }
            let value: JSONValue
            if fieldInfo.isMap {
                value = .object(try mapEntries(elements, of: field, info: fieldInfo, storage: storage))
            } else if fieldInfo.isRepeated {
                var values: [JSONValue] = []
                for element in elements {
                    values.append(try single(element, field: field, info: fieldInfo, storage: storage))
                }
                value = .array(values)
            } else {
                members.append((field.name, try single(field.value, field: field, info: fieldInfo, storage: storage)))
                continue
            }
            guard let at = joined[index] else {
                joined[index] = members.count
                members.append((field.name, value))
                continue
            }
            switch (members[at].value, value) {
            case (.array(let earlier), .array(let more)): members[at].value = .array(earlier + more)
            case (.object(let earlier), .object(let more)): members[at].value = .object(earlier + more)
            default: members[at].value = value
            }
        }
        return .object(members)
    }

    /// A map field's entries (`{ key: … value: … }` each) as the members of its JSON object.
    private static func mapEntries(
        _ elements: [TextFormatParser.Value], of field: TextFormatParser.Field, info: SchemaStorage.FieldInfo,
        storage: SchemaStorage
    ) throws(ProtoSchemaError) -> [Member] {
        let entry = storage.messages[info.messageIndex!]
        let keyInfo = entry.fields[entry.fieldByNumber[1]!]
        let valueInfo = entry.fields[entry.fieldByNumber[2]!]
        var entries: [Member] = []
        for element in elements {
            guard case .message(let entryFields) = element else {
                throw failure(field, "an entry of map \(info.name) is { key: … value: … }")
            }
            var key = ""
            var value = zero(valueInfo)
            for entryField in entryFields {
                switch entryField.name {
                case "key": key = try mapKey(entryField, info: keyInfo)
                case "value": value = try single(entryField.value, field: entryField, info: valueInfo, storage: storage)
                default: throw failure(entryField, "an entry of map \(info.name) has only key and value")
                }
            }
            entries.append((key, value))
        }
        return entries
    }

    /// One value of a field, as the JSON mapping writes it.
    private static func single(
        _ value: TextFormatParser.Value, field: TextFormatParser.Field, info: SchemaStorage.FieldInfo,
        storage: SchemaStorage
    ) throws(ProtoSchemaError) -> JSONValue {
        let isMessage = info.type == .message || info.type == .group
        switch value {
        case .message(let fields):
            guard isMessage else { throw failure(field, "\(info.name) is a \(info.type), not a message") }
            return try object(fields, info: storage.messages[info.messageIndex!], storage: storage)
        case .list:
            throw failure(field, "a list inside a list for \(info.name)")
        case _ where isMessage:
            throw failure(field, "\(info.name) is a message: write it { … }")
        case .string(let bytes):
            return try stringValue(bytes, field: field, info: info)
        case .identifier(let word):
            return try wordValue(word, field: field, info: info)
        case .number(let literal):
            switch info.type {
            case .bool where literal == "0" || literal == "1": return .bool(literal == "1")
            case .string, .bytes, .bool:
                throw failure(field, "expected \(expectation(info)) for \(info.name), got a number \(literal)")
            default: return .number(literal)
            }
        }
    }

    private static func stringValue(_ bytes: [UInt8], field: TextFormatParser.Field, info: SchemaStorage.FieldInfo)
        throws(ProtoSchemaError) -> JSONValue
    {
        switch info.type {
        case .string:
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw failure(field, "the string for \(info.name) is not valid UTF-8 (a bytes field would take it)")
            }
            return JSONValue.string(text)
        case .bytes:
            return JSONValue.string(Base64.encode(bytes))
        default:
            let shown = String(decoding: bytes.prefix(40), as: UTF8.self)
            throw failure(field, "expected \(expectation(info)) for \(info.name), got a string \"\(shown)\"")
        }
    }

    private static func wordValue(_ word: String, field: TextFormatParser.Field, info: SchemaStorage.FieldInfo)
        throws(ProtoSchemaError) -> JSONValue
    {
        switch info.type {
        case .enum:
            return JSONValue.string(word)
        case .bool:
            if ["true", "True", "t"].contains(word) { return JSONValue.bool(true) }
            if ["false", "False", "f"].contains(word) { return JSONValue.bool(false) }
        case .float, .double:
            switch word.lowercased() {
            case "inf", "infinity": return JSONValue.string("Infinity")
            case "-inf", "-infinity": return JSONValue.string("-Infinity")
            case "nan", "-nan": return JSONValue.string("NaN")
            default: break
            }
        default:
            break
        }
        throw failure(field, "expected \(expectation(info)) for \(info.name), got \(word)")
    }

    /// A map entry's key, as JSON writes it (the key of an object).
    private static func mapKey(_ field: TextFormatParser.Field, info: SchemaStorage.FieldInfo) throws(ProtoSchemaError)
        -> String
    {
        switch (info.type, field.value) {
        case (.string, .string(let bytes)):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw failure(field, "the map key is not valid UTF-8")
            }
            return text
        case (.bool, .identifier(let word)) where ["true", "false"].contains(word): return word
        case (_, .number(let literal)) where info.type != .string && info.type != .bool: return literal
        default: throw failure(field, "expected \(expectation(info)) as the map key")
        }
    }

    /// A map entry's value when the entry leaves it out: its type's default.
    private static func zero(_ info: SchemaStorage.FieldInfo) -> JSONValue {
        switch info.type {
        case .string, .bytes: .string("")
        case .bool: .bool(false)
        case .message, .group: .object([])
        default: .number("0")
        }
    }

    private static func expectation(_ info: SchemaStorage.FieldInfo) -> String {
        switch info.type {
        case .string, .bytes: "a string"
        case .bool: "true or false"
        case .enum: "an enum value's name or number"
        default: "a number"
        }
    }

    private static func failure(_ field: TextFormatParser.Field, _ reason: String) -> ProtoSchemaError {
        ProtoSchemaError(
            code: .invalidTextFormat,
            message: "invalid text format at line \(field.line) column \(field.column): \(reason)")
    }
}
