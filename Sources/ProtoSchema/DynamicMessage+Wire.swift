extension DynamicMessage {
    /// Decodes a message of `descriptor`'s type from untrusted protobuf wire bytes.
    ///
    /// Numeric repeated fields are accepted packed and unpacked; unknown fields are skipped (and
    /// never printed); a singular sub-message that appears twice is merged, as protobuf requires.
    /// - Parameter maximumDepth: how deep sub-messages may nest before the input is refused.
    /// - Throws: `ProtoSchemaError` (`.invalidWireFormat`) naming the message type and the field
    ///   path: truncation, bad lengths or wire types, invalid UTF-8, nesting too deep.
    public init(
        serializedBytes bytes: [UInt8], as descriptor: MessageDescriptor, maximumDepth: Int = defaultMaximumDepth
    ) throws(ProtoSchemaError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(ProtoSchemaError) in
                try DynamicMessage(serializedBytes: raw, as: descriptor, maximumDepth: maximumDepth)
            }
        }
        self = try result.get()
    }

    /// Decodes a message from untrusted bytes; see `init(serializedBytes:as:maximumDepth:)`.
    public init(
        serializedBytes bytes: UnsafeRawBufferPointer, as descriptor: MessageDescriptor,
        maximumDepth: Int = defaultMaximumDepth
    ) throws(ProtoSchemaError) {
        self.init(descriptor)
        do throws(WireDecodingFailure) {
            try merge(bytes, depth: 0, maximumDepth: maximumDepth)
        } catch {
            throw ProtoSchemaError(code: .invalidWireFormat, message: error.message(decoding: descriptor.fullName))
        }
    }

    /// The message's protobuf encoding.
    ///
    /// Fields go in field-number order; zero values of fields without presence are left out;
    /// numeric lists are packed (unless the schema says otherwise); map entries go in key order,
    /// each without its zero key or zero scalar value (as protobuf-c writes them).
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        encode(appendingTo: &out)
        return out
    }

    /// Appends the message's protobuf encoding to `out`.
    public func encode(appendingTo out: inout [UInt8]) {
        let info = descriptor.info
        let storage = descriptor.storage
        for index in info.encodingOrder {
            guard let value = values[index] else { continue }
            let field = info.fields[index]
            switch value {
            case .map(let entries):
                let entryInfo = storage.messages[field.messageIndex!]
                let keyField = entryInfo.fields[entryInfo.fieldByNumber[1]!]
                let valueField = entryInfo.fields[entryInfo.fieldByNumber[2]!]
                for key in entries.keys.sorted() {
                    var entry: [UInt8] = []
                    let keyValue = key.value
                    if !keyValue.isZero { Self.encodeSingle(keyValue, number: 1, type: keyField.type, into: &entry) }
                    let entryValue = entries[key]!
                    if valueField.type == .message || !entryValue.isZero {
                        Self.encodeSingle(entryValue, number: 2, type: valueField.type, into: &entry)
                    }
                    WireWriter.tag(field.number, .lengthDelimited, into: &out)
                    WireWriter.lengthDelimited(entry, into: &out)
                }
            case .list(let elements):
                if field.isPacked {
                    var payload: [UInt8] = []
                    for element in elements { Self.encodeScalar(element, type: field.type, into: &payload) }
                    WireWriter.tag(field.number, .lengthDelimited, into: &out)
                    WireWriter.lengthDelimited(payload, into: &out)
                } else {
                    for element in elements {
                        Self.encodeSingle(element, number: field.number, type: field.type, into: &out)
                    }
                }
            default:
                Self.encodeSingle(value, number: field.number, type: field.type, into: &out)
            }
        }
    }

    private static func encodeSingle(_ value: ProtoValue, number: Int32, type: FieldType, into out: inout [UInt8]) {
        WireWriter.tag(number, type.wireType, into: &out)
        encodeScalar(value, type: type, into: &out)
    }

    /// Writes a value without its key (the element of a packed list, or the part after a tag).
    private static func encodeScalar(_ value: ProtoValue, type: FieldType, into out: inout [UInt8]) {
        switch (value, type) {
        case (.int32(let v), .sint32): WireWriter.varint(WireWriter.zigZag32(v), into: &out)
        case (.int32(let v), .sfixed32): WireWriter.fixed32(UInt32(bitPattern: v), into: &out)
        case (.int32(let v), _): WireWriter.varint(UInt64(bitPattern: Int64(v)), into: &out)
        case (.int64(let v), .sint64): WireWriter.varint(WireWriter.zigZag64(v), into: &out)
        case (.int64(let v), .sfixed64): WireWriter.fixed64(UInt64(bitPattern: v), into: &out)
        case (.int64(let v), _): WireWriter.varint(UInt64(bitPattern: v), into: &out)
        case (.uint32(let v), .fixed32): WireWriter.fixed32(v, into: &out)
        case (.uint32(let v), _): WireWriter.varint(UInt64(v), into: &out)
        case (.uint64(let v), .fixed64): WireWriter.fixed64(v, into: &out)
        case (.uint64(let v), _): WireWriter.varint(v, into: &out)
        case (.enumNumber(let v), _): WireWriter.varint(UInt64(bitPattern: Int64(v)), into: &out)
        case (.bool(let v), _): WireWriter.varint(v ? 1 : 0, into: &out)
        case (.float(let v), _): WireWriter.fixed32(v.bitPattern, into: &out)
        case (.double(let v), _): WireWriter.fixed64(v.bitPattern, into: &out)
        case (.string(let v), _): WireWriter.lengthDelimited(Array(v.utf8), into: &out)
        case (.bytes(let v), _): WireWriter.lengthDelimited(v, into: &out)
        case (.message(let v), _): WireWriter.lengthDelimited(v.serializedBytes(), into: &out)
        case (.list, _), (.map, _):
            // `set` and the decoders only put lists and maps in repeated and map fields.
            preconditionFailure("a list or map value inside a list or map")
        }
    }

    // MARK: - Decoding

    /// Reads the bytes of the sub-message in field `name`; a failure's path gains that field.
    private mutating func merge(
        _ bytes: UnsafeRawBufferPointer, depth: Int, maximumDepth: Int, within name: String
    ) throws(WireDecodingFailure) {
        do throws(WireDecodingFailure) {
            try merge(bytes, depth: depth, maximumDepth: maximumDepth)
        } catch {
            var failure = error
            failure.path.insert(name, at: 0)
            throw failure
        }
    }

    /// Reads `bytes` into this message, as protobuf's merge does.
    mutating func merge(_ bytes: UnsafeRawBufferPointer, depth: Int, maximumDepth: Int) throws(WireDecodingFailure) {
        let info = descriptor.info
        guard depth <= maximumDepth else {
            throw WireDecodingFailure(
                messageName: info.fullName, reason: "messages nested more than \(maximumDepth) deep")
        }
        var reader = WireReader(bytes)
        while !reader.isAtEnd {
            let number: Int32
            let wireType: WireReader.WireType
            do throws(WireReader.Failure) {
                (number, wireType) = try reader.tag()
            } catch {
                throw WireDecodingFailure(messageName: info.fullName, reason: error.reason)
            }
            guard let index = info.fieldByNumber[number] else {
                do throws(WireReader.Failure) {
                    try reader.skip(wireType, number: number, depth: maximumDepth - depth)
                } catch {
                    throw WireDecodingFailure(
                        messageName: info.fullName, reason: "unknown field \(number): \(error.reason)")
                }
                continue
            }
            try mergeField(at: index, wireType: wireType, from: &reader, depth: depth, maximumDepth: maximumDepth)
        }
    }

    private mutating func mergeField(
        at index: Int, wireType: WireReader.WireType, from reader: inout WireReader, depth: Int, maximumDepth: Int
    ) throws(WireDecodingFailure) {
        let field = descriptor.info.fields[index]
        let storage = descriptor.storage
        func fail(_ reason: String) -> WireDecodingFailure {
            WireDecodingFailure(
                messageName: descriptor.info.fullName, path: [field.name], fieldNumber: field.number, reason: reason)
        }
        func expect(_ expected: WireReader.WireType) throws(WireDecodingFailure) {
            guard wireType == expected else {
                throw fail("wire type \(wireType.name), expected \(expected.name) for a \(field.type) field")
            }
        }
        guard field.type != .group else { throw fail("proto2 groups are not supported") }

        if field.isMap {
            try expect(.lengthDelimited)
            let body = try Self.attempt(fail) { () throws(WireReader.Failure) in try reader.lengthDelimited() }
            let entryDescriptor = MessageDescriptor(storage: storage, index: field.messageIndex!)
            var entry = DynamicMessage(entryDescriptor)
            try entry.merge(body, depth: depth + 1, maximumDepth: maximumDepth, within: field.name)
            let keyField = entryDescriptor.field(number: 1)!
            let valueField = entryDescriptor.field(number: 2)!
            guard let key = MapKey(entry.value(of: keyField)) else { throw fail("map entry without a valid key") }
            var map: [MapKey: ProtoValue] = [:]
            if case .map(let existing)? = values[index] { map = existing }
            values[index] = nil // so `map` is the only reference and grows in place
            map[key] = entry.value(of: valueField)
            values[index] = .map(map)
        } else if field.isRepeated {
            var list: [ProtoValue] = []
            if case .list(let existing)? = values[index] { list = existing }
            values[index] = nil // so `list` is the only reference and grows in place
            if wireType == .lengthDelimited && field.type.isPackable {
                let body = try Self.attempt(fail) { () throws(WireReader.Failure) in try reader.lengthDelimited() }
                var packed = WireReader(body)
                while !packed.isAtEnd {
                    list.append(
                        try readValue(
                            field, from: &packed, existing: nil, depth: depth, maximumDepth: maximumDepth, fail: fail))
                }
            } else {
                try expect(field.type.wireType)
                list.append(
                    try readValue(
                        field, from: &reader, existing: nil, depth: depth, maximumDepth: maximumDepth, fail: fail))
            }
            values[index] = list.isEmpty ? nil : .list(list)
        } else {
            try expect(field.type.wireType)
            let value = try readValue(
                field, from: &reader, existing: values[index], depth: depth, maximumDepth: maximumDepth, fail: fail)
            store(value, at: index)
        }
    }

    /// Reads one value of `field`'s type (wire type already checked).
    private func readValue(
        _ field: SchemaStorage.FieldInfo, from reader: inout WireReader, existing: ProtoValue?,
        depth: Int, maximumDepth: Int, fail: (String) -> WireDecodingFailure
    ) throws(WireDecodingFailure) -> ProtoValue {
        switch field.type {
        case .string:
            let body = try Self.attempt(fail) { () throws(WireReader.Failure) in try reader.lengthDelimited() }
            guard let string = String(validating: body, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
            return .string(string)
        case .message, .group:
            let body = try Self.attempt(fail) { () throws(WireReader.Failure) in try reader.lengthDelimited() }
            var message: DynamicMessage
            if case .message(let previous)? = existing {
                message = previous
            } else {
                message = DynamicMessage(MessageDescriptor(storage: descriptor.storage, index: field.messageIndex!))
            }
            try message.merge(body, depth: depth + 1, maximumDepth: maximumDepth, within: field.name)
            return .message(message)
        default:
            return try Self.attempt(fail) { () throws(WireReader.Failure) in
                try Self.readScalar(field.type, from: &reader)
            }
        }
    }

    /// Reads one numeric, bool, enum or bytes value.
    private static func readScalar(_ type: FieldType, from reader: inout WireReader) throws(WireReader.Failure)
        -> ProtoValue
    {
        switch type {
        case .bool: return .bool(try reader.varint() != 0)
        case .int32: return .int32(Int32(truncatingIfNeeded: try reader.varint()))
        case .int64: return .int64(Int64(bitPattern: try reader.varint()))
        case .uint32: return .uint32(UInt32(truncatingIfNeeded: try reader.varint()))
        case .uint64: return .uint64(try reader.varint())
        case .sint32:
            let raw = UInt32(truncatingIfNeeded: try reader.varint())
            return .int32(Int32(bitPattern: raw >> 1) ^ -Int32(bitPattern: raw & 1))
        case .sint64:
            let raw = try reader.varint()
            return .int64(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
        case .enum: return .enumNumber(Int32(truncatingIfNeeded: try reader.varint()))
        case .fixed32: return .uint32(try reader.fixed32())
        case .sfixed32: return .int32(Int32(bitPattern: try reader.fixed32()))
        case .float: return .float(Float(bitPattern: try reader.fixed32()))
        case .fixed64: return .uint64(try reader.fixed64())
        case .sfixed64: return .int64(Int64(bitPattern: try reader.fixed64()))
        case .double: return .double(Double(bitPattern: try reader.fixed64()))
        case .bytes: return .bytes(Array(try reader.lengthDelimited()))
        case .string, .message, .group:
            preconditionFailure("readValue reads \(type) values itself")
        }
    }

    /// Runs a reader step, turning its failure into one naming the field.
    private static func attempt<T>(
        _ fail: (String) -> WireDecodingFailure, _ step: () throws(WireReader.Failure) -> T
    ) throws(WireDecodingFailure) -> T {
        do throws(WireReader.Failure) { return try step() } catch { throw fail(error.reason) }
    }
}

/// Why wire bytes could not be decoded, and where: the path of field names from the top-level
/// message to the failure, the innermost message type and the failing field's number.
struct WireDecodingFailure: Error {
    var messageName: String
    var path: [String] = []
    var fieldNumber: Int32?
    var reason: String

    func message(decoding topLevel: String) -> String {
        guard !path.isEmpty else { return "invalid \(topLevel): \(reason)" }
        let subject = path.joined(separator: ".")
        if let fieldNumber {
            let owner = messageName == topLevel ? "" : " of \(messageName)"
            return "invalid \(topLevel): field \"\(subject)\" (number \(fieldNumber)\(owner)): \(reason)"
        }
        return "invalid \(topLevel): in field \"\(subject)\" (\(messageName)): \(reason)"
    }
}
