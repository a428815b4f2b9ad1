/// Reads the subset of `google/protobuf/descriptor.proto` that a `Schema` needs, straight from
/// the wire bytes of a `FileDescriptorSet`.
///
/// A hand-written reader keeps this module free of any generated descriptor code (protobuf-c's
/// `descriptor.proto` output would tie it to C). Fields it does not need are skipped; a known
/// field with the wrong wire type, a truncated value, invalid UTF-8 or nesting deeper than
/// `maximumDepth` is a `WireReader.Failure` naming the element it was found in.
enum DescriptorSetDecoder {
    /// Message nesting deeper than this is refused (protoc itself allows far less in practice).
    static let maximumDepth = 100

    struct File {
        var name = ""
        var package = ""
        var dependencies: [String] = []
        var messages: [Message] = []
        var enums: [Enum] = []
        var services: [Service] = []
        var syntax = ""
        var locations: [Location] = []
    }

    struct Message {
        var name = ""
        var fields: [Field] = []
        var nested: [Message] = []
        var enums: [Enum] = []
        var oneofs: [String] = []
        var isMapEntry = false
    }

    struct Field {
        var name = ""
        var number: Int32 = 0
        var label: Int32 = 0
        var type: Int32 = 0
        var typeName = ""
        var oneofIndex: Int32?
        var jsonName: String?
        var proto3Optional = false
        var packed: Bool?
    }

    struct Enum {
        var name = ""
        var values: [(name: String, number: Int32)] = []
    }

    struct Service {
        var name = ""
        var methods: [Method] = []
    }

    struct Method {
        var name = ""
        var inputType = ""
        var outputType = ""
        var clientStreaming = false
        var serverStreaming = false
    }

    struct Location {
        var path: [Int32] = []
        var leadingComments: String?
    }

    typealias Failure = WireReader.Failure
    typealias WireType = WireReader.WireType

    /// The files of a serialized `FileDescriptorSet` (or of several concatenated ones).
    static func files(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [File] {
        var files: [File] = []
        try fields(of: bytes, depth: 0) { (number, wireType, reader) throws(Failure) in
            guard number == 1 else { return false }
            let body = try lengthDelimited(&reader, wireType, "file")
            do throws(Failure) {
                files.append(try file(body))
            } catch {
                throw Failure(reason: "file #\(files.count + 1)\(named(peekName(body))): \(error.reason)")
            }
            return true
        }
        return files
    }

    private static func file(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> File {
        var file = File()
        try fields(of: bytes, depth: 0) { (number, wireType, reader) throws(Failure) in
            switch number {
            case 1: file.name = try string(&reader, wireType, "name")
            case 2: file.package = try string(&reader, wireType, "package")
            case 3: file.dependencies.append(try string(&reader, wireType, "dependency"))
            case 4:
                let body = try lengthDelimited(&reader, wireType, "message_type")
                file.messages.append(
                    try element("message", file.messages.count, body) { (b) throws(Failure) in try message(b, depth: 1)
                    })
            case 5:
                let body = try lengthDelimited(&reader, wireType, "enum_type")
                file.enums.append(
                    try element("enum", file.enums.count, body) { (b) throws(Failure) in try enumType(b) })
            case 6:
                let body = try lengthDelimited(&reader, wireType, "service")
                file.services.append(
                    try element("service", file.services.count, body) { (b) throws(Failure) in try service(b) })
            case 9:
                file.locations = try sourceCodeInfo(lengthDelimited(&reader, wireType, "source_code_info"))
            case 12: file.syntax = try string(&reader, wireType, "syntax")
            default: return false
            }
            return true
        }
        return file
    }

    private static func message(_ bytes: UnsafeRawBufferPointer, depth: Int) throws(Failure) -> Message {
        guard depth <= maximumDepth else {
            throw Failure(reason: "message types nested more than \(maximumDepth) deep")
        }
        var message = Message()
        try fields(of: bytes, depth: depth) { (number, wireType, reader) throws(Failure) in
            switch number {
            case 1: message.name = try string(&reader, wireType, "name")
            case 2:
                let body = try lengthDelimited(&reader, wireType, "field")
                message.fields.append(
                    try element("field", message.fields.count, body) { (b) throws(Failure) in try field(b) })
            case 3:
                let body = try lengthDelimited(&reader, wireType, "nested_type")
                message.nested.append(
                    try element("message", message.nested.count, body) { (b) throws(Failure) in
                        try Self.message(b, depth: depth + 1)
                    })
            case 4:
                let body = try lengthDelimited(&reader, wireType, "enum_type")
                message.enums.append(
                    try element("enum", message.enums.count, body) { (b) throws(Failure) in try enumType(b) })
            case 7:
                try fields(of: lengthDelimited(&reader, wireType, "options"), depth: depth) {
                    (number, wireType, reader) throws(Failure) in
                    guard number == 7 else { return false }
                    message.isMapEntry = try bool(&reader, wireType, "map_entry")
                    return true
                }
            case 8:
                var name = ""
                try fields(of: lengthDelimited(&reader, wireType, "oneof_decl"), depth: depth) {
                    (number, wireType, reader) throws(Failure) in
                    guard number == 1 else { return false }
                    name = try string(&reader, wireType, "name")
                    return true
                }
                message.oneofs.append(name)
            default: return false
            }
            return true
        }
        return message
    }

    private static func field(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Field {
        var field = Field()
        try fields(of: bytes, depth: 0) { (number, wireType, reader) throws(Failure) in
            switch number {
            case 1: field.name = try string(&reader, wireType, "name")
            case 3: field.number = try int32(&reader, wireType, "number")
            case 4: field.label = try int32(&reader, wireType, "label")
            case 5: field.type = try int32(&reader, wireType, "type")
            case 6: field.typeName = try string(&reader, wireType, "type_name")
            case 8:
                try fields(of: lengthDelimited(&reader, wireType, "options"), depth: 0) {
                    (number, wireType, reader) throws(Failure) in
                    guard number == 2 else { return false }
                    field.packed = try bool(&reader, wireType, "packed")
                    return true
                }
            case 9: field.oneofIndex = try int32(&reader, wireType, "oneof_index")
            case 10: field.jsonName = try string(&reader, wireType, "json_name")
            case 17: field.proto3Optional = try bool(&reader, wireType, "proto3_optional")
            default: return false
            }
            return true
        }
        return field
    }

    private static func enumType(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Enum {
        var result = Enum()
        try fields(of: bytes, depth: 0) { (number, wireType, reader) throws(Failure) in
            switch number {
            case 1: result.name = try string(&reader, wireType, "name")
            case 2:
                var value = (name: "", number: Int32(0))
                try fields(of: lengthDelimited(&reader, wireType, "value"), depth: 0) {
                    (number, wireType, reader) throws(Failure) in
                    switch number {
                    case 1: value.name = try string(&reader, wireType, "name")
                    case 2: value.number = try int32(&reader, wireType, "number")
                    default: return false
                    }
                    return true
                }
                result.values.append(value)
            default: return false
            }
            return true
        }
        return result
    }

    private static func service(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Service {
        var service = Service()
        try fields(of: bytes, depth: 0) { (number, wireType, reader) throws(Failure) in
            switch number {
            case 1: service.name = try string(&reader, wireType, "name")
            case 2:
                var method = Method()
                try fields(of: lengthDelimited(&reader, wireType, "method"), depth: 0) {
                    (number, wireType, reader) throws(Failure) in
                    switch number {
                    case 1: method.name = try string(&reader, wireType, "name")
                    case 2: method.inputType = try string(&reader, wireType, "input_type")
                    case 3: method.outputType = try string(&reader, wireType, "output_type")
                    case 5: method.clientStreaming = try bool(&reader, wireType, "client_streaming")
                    case 6: method.serverStreaming = try bool(&reader, wireType, "server_streaming")
                    default: return false
                    }
                    return true
                }
                service.methods.append(method)
            default: return false
            }
            return true
        }
        return service
    }

    private static func sourceCodeInfo(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [Location] {
        var locations: [Location] = []
        try fields(of: bytes, depth: 0) { (number, wireType, reader) throws(Failure) in
            guard number == 1 else { return false }
            var location = Location()
            try fields(of: lengthDelimited(&reader, wireType, "location"), depth: 0) {
                (number, wireType, reader) throws(Failure) in
                switch number {
                case 1:
                    if wireType == .lengthDelimited {
                        var packed = WireReader(try reader.lengthDelimited())
                        while !packed.isAtEnd { location.path.append(Int32(truncatingIfNeeded: try packed.varint())) }
                    } else {
                        location.path.append(try int32(&reader, wireType, "path"))
                    }
                case 3: location.leadingComments = try string(&reader, wireType, "leading_comments")
                default: return false
                }
                return true
            }
            locations.append(location)
            return true
        }
        return locations
    }

    // MARK: - Helpers

    /// Reads every field of `bytes`, handing each to `handle`; fields it returns false for are skipped.
    private static func fields(
        of bytes: UnsafeRawBufferPointer, depth: Int,
        _ handle: (Int32, WireType, inout WireReader) throws(Failure) -> Bool
    ) throws(Failure) {
        var reader = WireReader(bytes)
        while !reader.isAtEnd {
            let (number, wireType) = try reader.tag()
            if try !handle(number, wireType, &reader) {
                try reader.skip(wireType, number: number, depth: maximumDepth - depth)
            }
        }
    }

    /// Parses one element of a repeated field, naming it in a failure.
    private static func element<T>(
        _ kind: String, _ index: Int, _ bytes: UnsafeRawBufferPointer,
        _ parse: (UnsafeRawBufferPointer) throws(Failure) -> T
    ) throws(Failure) -> T {
        do throws(Failure) {
            return try parse(bytes)
        } catch {
            throw Failure(reason: "\(kind) #\(index + 1)\(named(peekName(bytes))): \(error.reason)")
        }
    }

    /// The `name` (field 1) of an element, when it can be read, for error messages.
    private static func peekName(_ bytes: UnsafeRawBufferPointer) -> String? {
        var reader = WireReader(bytes)
        while !reader.isAtEnd {
            guard let (number, wireType) = try? reader.tag() else { return nil }
            if number == 1 && wireType == .lengthDelimited {
                guard let body = try? reader.lengthDelimited() else { return nil }
                return String(validating: body, as: UTF8.self)
            }
            guard (try? reader.skip(wireType, number: number, depth: 1)) != nil else { return nil }
        }
        return nil
    }

    private static func named(_ name: String?) -> String {
        guard let name, !name.isEmpty else { return "" }
        return " (\"\(name)\")"
    }

    private static func expect(_ actual: WireType, _ expected: WireType, _ field: String) throws(Failure) {
        guard actual == expected else {
            throw Failure(reason: "field \(field) has wire type \(actual.name), expected \(expected.name)")
        }
    }

    private static func lengthDelimited(
        _ reader: inout WireReader, _ wireType: WireType, _ field: String
    ) throws(Failure) -> UnsafeRawBufferPointer {
        try expect(wireType, .lengthDelimited, field)
        return try reader.lengthDelimited()
    }

    private static func string(_ reader: inout WireReader, _ wireType: WireType, _ field: String) throws(Failure)
        -> String
    {
        let body = try lengthDelimited(&reader, wireType, field)
        guard let string = String(validating: body, as: UTF8.self) else {
            throw Failure(reason: "field \(field) is not valid UTF-8")
        }
        return string
    }

    private static func int32(_ reader: inout WireReader, _ wireType: WireType, _ field: String) throws(Failure)
        -> Int32
    {
        try expect(wireType, .varint, field)
        return Int32(truncatingIfNeeded: try reader.varint())
    }

    private static func bool(_ reader: inout WireReader, _ wireType: WireType, _ field: String) throws(Failure) -> Bool
    {
        try expect(wireType, .varint, field)
        return try reader.varint() != 0
    }
}
