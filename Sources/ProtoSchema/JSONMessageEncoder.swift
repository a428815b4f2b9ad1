import ByteCoding

/// Prints dynamic messages as proto3 JSON (https://protobuf.dev/programming-guides/proto3/#json).
///
/// Fields go in declaration order under their JSON names; 64-bit integers as strings; enums by
/// name (a number the enum does not name, as a number); bytes as padded standard base64;
/// non-finite floats as "NaN", "Infinity", "-Infinity"; map entries sorted by key.
struct JSONMessageEncoder {
    private let options: JSONFormatOptions
    private var writer: JSONWriter

    private init(options: JSONFormatOptions) {
        self.options = options
        self.writer = JSONWriter(pretty: options.pretty)
    }

    static func encode(_ message: DynamicMessage, options: JSONFormatOptions) -> [UInt8] {
        var encoder = JSONMessageEncoder(options: options)
        encoder.message(message)
        return encoder.writer.output
    }

    private mutating func message(_ message: DynamicMessage) {
        let info = message.descriptor.info
        let storage = message.descriptor.storage
        writer.beginObject()
        for (index, field) in info.fields.enumerated() {
            let name = options.preserveProtoFieldNames ? field.name : field.jsonName
            if let value = message.values[index] {
                writer.key(name)
                self.value(value, of: field, storage: storage)
            } else if options.emitDefaults {
                if field.oneofIndex != nil { continue } // oneof members and `optional` fields: only when set
                writer.key(name)
                if field.isMap {
                    writer.beginObject()
                    writer.endObject()
                } else if field.isRepeated {
                    writer.beginArray()
                    writer.endArray()
                } else if let zero = ProtoValue.zero(of: field.type) {
                    single(zero, of: field, storage: storage)
                } else {
                    writer.raw("null")
                }
            }
        }
        writer.endObject()
    }

    private mutating func value(_ value: ProtoValue, of field: SchemaStorage.FieldInfo, storage: SchemaStorage) {
        switch value {
        case .list(let elements):
            writer.beginArray()
            for element in elements {
                writer.element()
                single(element, of: field, storage: storage)
            }
            writer.endArray()
        case .map(let entries):
            let entry = storage.messages[field.messageIndex!]
            let valueField = entry.fields[entry.fieldByNumber[2]!]
            writer.beginObject()
            for key in entries.keys.sorted() {
                writer.key(key.description)
                single(entries[key]!, of: valueField, storage: storage)
            }
            writer.endObject()
        default:
            single(value, of: field, storage: storage)
        }
    }

    private mutating func single(_ value: ProtoValue, of field: SchemaStorage.FieldInfo, storage: SchemaStorage) {
        switch value {
        case .bool(let v): writer.raw(v ? "true" : "false")
        case .int32(let v): writer.append { JSONText.appendInteger(Int64(v), to: &$0) }
        case .uint32(let v): writer.append { JSONText.appendInteger(UInt64(v), to: &$0) }
        case .int64(let v): writer.append { JSONText.appendQuotedInteger(v, to: &$0) }
        case .uint64(let v): writer.append { JSONText.appendQuotedInteger(v, to: &$0) }
        case .float(let v): writer.append { JSONText.appendFloat(v, to: &$0) }
        case .double(let v): writer.append { JSONText.appendDouble(v, to: &$0) }
        case .string(let v): writer.string(v)
        case .bytes(let v): writer.append { JSONText.appendBase64(v, to: &$0) }
        case .enumNumber(let v):
            if let enumIndex = field.enumIndex, let valueIndex = storage.enums[enumIndex].valueByNumber[v] {
                writer.string(storage.enums[enumIndex].values[valueIndex].name)
            } else {
                writer.append { JSONText.appendInteger(Int64(v), to: &$0) }
            }
        case .message(let v): message(v)
        case .list, .map:
            // Lists and maps only ever hold single values (see `DynamicMessage.problem(with:for:storage:)`).
            preconditionFailure("a list or map inside a list or map")
        }
    }
}
