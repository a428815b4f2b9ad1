import ByteCoding

/// The files of the served descriptor sets, indexed for server reflection by file name, by
/// symbol and by extension.
///
/// Reflection answers with each file's serialized `FileDescriptorProto` exactly as protoc wrote
/// it, so the index keeps every file's original bytes and reads only the names it needs out of
/// them (a hand-written reader: `ProtoSchema` builds a resolved schema but keeps no bytes).
/// Symbols follow protobuf's scoping: a message's fields, oneofs, nested types and enums are
/// inside it, an enum's values are beside the enum (C++ scoping), a service's methods inside it.
struct ReflectionIndex: Sendable {
    struct File: Sendable {
        var name: String
        /// The serialized `FileDescriptorProto`, verbatim.
        var bytes: [UInt8]
        /// The files it imports, as indices into `files`.
        var dependencies: [Int]
    }

    enum SymbolKind: Sendable {
        case message
        case enumType
        case enumValue
        case field
        case oneof
        case service
        case method
        case `extension`
    }

    struct Symbol: Sendable {
        var file: Int
        var kind: SymbolKind
    }

    struct ExtensionKey: Hashable, Sendable {
        /// The extended message's full name, without a leading dot.
        var extendee: String
        var number: Int32
    }

    private(set) var files: [File] = []
    private(set) var fileNamed: [String: Int] = [:]
    private(set) var symbols: [String: Symbol] = [:]
    /// The file declaring each extension.
    private(set) var extensions: [ExtensionKey: Int] = [:]

    /// Indexes the files of `sets`; a file name already seen in an earlier set (or earlier in the
    /// same one) is skipped, so each file is served from the first set that has it.
    init(fileDescriptorSets sets: [[UInt8]]) throws(GRPCReflectionError) {
        var imports: [[String]] = []
        for (setIndex, set) in sets.enumerated() {
            var parsed: [(file: File, imports: [String], declarations: Declarations)] = []
            do throws(DescriptorReader.Failure) {
                var reader = DescriptorReader(set, set.indices)
                while let (number, value) = try reader.next() {
                    guard number == 1 else { continue }
                    let range = try value.bytes("file")
                    parsed.append(try Self.file(set, range, position: parsed.count + 1))
                }
            } catch {
                throw GRPCReflectionError("descriptor set #\(setIndex + 1) does not parse: \(error.reason)")
            }
            for (file, fileImports, declarations) in parsed where fileNamed[file.name] == nil {
                let index = files.count
                files.append(file)
                imports.append(fileImports)
                fileNamed[file.name] = index
                for (name, kind) in declarations.symbols where symbols[name] == nil {
                    symbols[name] = Symbol(file: index, kind: kind)
                }
                for key in declarations.extensions where extensions[key] == nil { extensions[key] = index }
            }
        }
        for (index, names) in imports.enumerated() {
            for name in names {
                guard let dependency = fileNamed[name] else {
                    throw GRPCReflectionError(
                        "\(files[index].name) imports \(name), which none of the descriptor sets has "
                            + "(a set must include its imports)")
                }
                files[index].dependencies.append(dependency)
            }
        }
    }

    /// The file at `index` followed by every file it imports, directly or not, each once, in
    /// breadth-first order (what grpc-go's and grpc-java's servers return).
    func withDependencies(_ index: Int) -> [[UInt8]] {
        var order = [index]
        var seen: Set = [index]
        var next = 0
        while next < order.count {
            for dependency in files[order[next]].dependencies where seen.insert(dependency).inserted {
                order.append(dependency)
            }
            next += 1
        }
        return order.map { files[$0].bytes }
    }

    /// The numbers of the extensions of `extendee` (a full name without a leading dot), sorted.
    func extensionNumbers(of extendee: String) -> [Int32] {
        extensions.keys.filter { $0.extendee == extendee }.map(\.number).sorted()
    }

    // MARK: - Reading a FileDescriptorProto

    /// What one file declares, before it is known whether the file is kept.
    private struct Declarations {
        var symbols: [(String, SymbolKind)] = []
        var extensions: [ExtensionKey] = []
    }

    /// Message nesting deeper than this is refused (as `ProtoSchema` refuses it).
    private static let maximumDepth = 100

    private static func file(
        _ bytes: [UInt8], _ range: Range<Int>, position: Int
    ) throws(DescriptorReader.Failure) -> (file: File, imports: [String], declarations: Declarations) {
        var name = ""
        var package = ""
        var imports: [String] = []
        var declarations = Declarations()
        // Scoped names need the package, which protoc writes before the declarations but the
        // format does not promise: collect the declarations' ranges first.
        var messages: [Range<Int>] = []
        var enums: [Range<Int>] = []
        var services: [Range<Int>] = []
        var extensionFields: [Range<Int>] = []
        do throws(DescriptorReader.Failure) {
            var reader = DescriptorReader(bytes, range)
            while let (number, value) = try reader.next() {
                switch number {
                case 1: name = try value.string(bytes, "name")
                case 2: package = try value.string(bytes, "package")
                case 3: imports.append(try value.string(bytes, "dependency"))
                case 4: messages.append(try value.bytes("message_type"))
                case 5: enums.append(try value.bytes("enum_type"))
                case 6: services.append(try value.bytes("service"))
                case 7: extensionFields.append(try value.bytes("extension"))
                default: continue
                }
            }
            guard !name.isEmpty else { throw DescriptorReader.Failure(reason: "the file has no name") }
            for message in messages {
                try Self.message(bytes, message, scope: package, depth: 1, into: &declarations)
            }
            for enumType in enums { try Self.enumType(bytes, enumType, scope: package, into: &declarations) }
            for service in services { try Self.service(bytes, service, scope: package, into: &declarations) }
            for field in extensionFields {
                try Self.extensionField(bytes, field, scope: package, into: &declarations)
            }
        } catch {
            let named = name.isEmpty ? "" : " (\"\(name)\")"
            throw DescriptorReader.Failure(reason: "file #\(position)\(named): \(error.reason)")
        }
        let file = File(name: name, bytes: Array(bytes[range]), dependencies: [])
        return (file, imports, declarations)
    }

    /// A `DescriptorProto`: name 1, field 2, nested_type 3, enum_type 4, extension 6, oneof_decl 8.
    private static func message(
        _ bytes: [UInt8], _ range: Range<Int>, scope: String, depth: Int, into declarations: inout Declarations
    ) throws(DescriptorReader.Failure) {
        guard depth <= maximumDepth else {
            throw DescriptorReader.Failure(reason: "message types nested more than \(maximumDepth) deep")
        }
        let name = try Self.name(bytes, range, "message")
        let fullName = qualified(scope, name)
        declarations.symbols.append((fullName, .message))
        var reader = DescriptorReader(bytes, range)
        while let (number, value) = try reader.next() {
            switch number {
            case 2:
                declarations.symbols.append(
                    (qualified(fullName, try Self.name(bytes, value.bytes("field"), "field")), .field))
            case 3:
                try message(bytes, value.bytes("nested_type"), scope: fullName, depth: depth + 1, into: &declarations)
            case 4: try enumType(bytes, value.bytes("enum_type"), scope: fullName, into: &declarations)
            case 6: try extensionField(bytes, value.bytes("extension"), scope: fullName, into: &declarations)
            case 8:
                declarations.symbols.append(
                    (qualified(fullName, try Self.name(bytes, value.bytes("oneof_decl"), "oneof")), .oneof))
            default: continue
            }
        }
    }

    /// An `EnumDescriptorProto`: name 1, value 2 (`EnumValueDescriptorProto` name 1).
    private static func enumType(
        _ bytes: [UInt8], _ range: Range<Int>, scope: String, into declarations: inout Declarations
    ) throws(DescriptorReader.Failure) {
        declarations.symbols.append((qualified(scope, try Self.name(bytes, range, "enum")), .enumType))
        var reader = DescriptorReader(bytes, range)
        while let (number, value) = try reader.next() {
            guard number == 2 else { continue }
            declarations.symbols.append(
                (qualified(scope, try Self.name(bytes, value.bytes("value"), "enum value")), .enumValue))
        }
    }

    /// A `ServiceDescriptorProto`: name 1, method 2 (`MethodDescriptorProto` name 1).
    private static func service(
        _ bytes: [UInt8], _ range: Range<Int>, scope: String, into declarations: inout Declarations
    ) throws(DescriptorReader.Failure) {
        let fullName = qualified(scope, try Self.name(bytes, range, "service"))
        declarations.symbols.append((fullName, .service))
        var reader = DescriptorReader(bytes, range)
        while let (number, value) = try reader.next() {
            guard number == 2 else { continue }
            declarations.symbols.append(
                (qualified(fullName, try Self.name(bytes, value.bytes("method"), "method")), .method))
        }
    }

    /// An extension's `FieldDescriptorProto`: name 1, extendee 2, number 3.
    private static func extensionField(
        _ bytes: [UInt8], _ range: Range<Int>, scope: String, into declarations: inout Declarations
    ) throws(DescriptorReader.Failure) {
        var name = ""
        var extendee = ""
        var fieldNumber: Int32 = 0
        var reader = DescriptorReader(bytes, range)
        while let (number, value) = try reader.next() {
            switch number {
            case 1: name = try value.string(bytes, "name")
            case 2: extendee = try value.string(bytes, "extendee")
            case 3: fieldNumber = Int32(truncatingIfNeeded: try value.varint("number"))
            default: continue
            }
        }
        guard !name.isEmpty, !extendee.isEmpty else {
            throw DescriptorReader.Failure(reason: "an extension has no name or no extendee")
        }
        declarations.symbols.append((qualified(scope, name), .extension))
        declarations.extensions.append(ExtensionKey(extendee: withoutLeadingDot(extendee), number: fieldNumber))
    }

    /// The `name` (field 1) of a declaration, which must have one.
    private static func name(
        _ bytes: [UInt8], _ range: Range<Int>, _ kind: String
    ) throws(DescriptorReader.Failure) -> String {
        var name = ""
        var reader = DescriptorReader(bytes, range)
        while let (number, value) = try reader.next() {
            guard number == 1 else { continue }
            name = try value.string(bytes, "name")
        }
        guard !name.isEmpty else { throw DescriptorReader.Failure(reason: "a \(kind) has no name") }
        return name
    }

    private static func qualified(_ scope: String, _ name: String) -> String {
        scope.isEmpty ? name : "\(scope).\(name)"
    }

    /// `name` without the leading dot of a fully-qualified protobuf name (`.pkg.Type`).
    static func withoutLeadingDot(_ name: String) -> String {
        name.hasPrefix(".") ? String(name.dropFirst()) : name
    }
}

/// Why reflection cannot serve the descriptor sets it is given.
public struct GRPCReflectionError: Error, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}

/// The fields of one protobuf message inside a byte array, read in order without copying;
/// every read is bounded by the message's range, so a hostile set is a `Failure`, not a crash.
struct DescriptorReader {
    struct Failure: Error {
        var reason: String
    }

    /// A field's value: its bytes' range for a length-delimited field, a varint, or a fixed or
    /// group value nobody here reads.
    enum Value {
        case varint(UInt64)
        case bytes(Range<Int>)
        case other

        func bytes(_ field: String) throws(Failure) -> Range<Int> {
            guard case .bytes(let range) = self else { throw Failure(reason: "\(field) is not length-delimited") }
            return range
        }

        func string(_ storage: [UInt8], _ field: String) throws(Failure) -> String {
            guard let text = String(validating: storage[try bytes(field)], as: UTF8.self) else {
                throw Failure(reason: "\(field) is not valid UTF-8")
            }
            return text
        }

        func varint(_ field: String) throws(Failure) -> UInt64 {
            guard case .varint(let value) = self else { throw Failure(reason: "\(field) is not a varint") }
            return value
        }
    }

    /// Groups (proto2's deprecated encoding, never in a descriptor but skippable) nest at most this deep.
    private static let maximumGroupDepth = 32

    private let bytes: [UInt8]
    private let end: Int
    private var offset: Int

    init(_ bytes: [UInt8], _ range: Range<Int>) {
        self.bytes = bytes
        self.offset = range.lowerBound
        self.end = range.upperBound
    }

    /// The next field's number and value, or nil at the end of the message.
    mutating func next() throws(Failure) -> (number: UInt64, value: Value)? {
        guard offset < end else { return nil }
        let (number, wireType) = try tag()
        return (number, try value(wireType, number: number, depth: 0))
    }

    private mutating func tag() throws(Failure) -> (number: UInt64, wireType: UInt64) {
        let key = try varint()
        guard key >> 3 >= 1, key >> 3 <= (1 << 29) - 1 else {
            throw Failure(reason: "invalid field number \(key >> 3) at byte \(offset)")
        }
        return (key >> 3, key & 7)
    }

    private mutating func varint() throws(Failure) -> UInt64 {
        do throws(Varint.Failure) {
            return try Varint.read(from: bytes[offset..<end], at: &offset)
        } catch {
            switch error {
            case .truncated: throw Failure(reason: "truncated varint")
            case .overflow: throw Failure(reason: "varint longer than 64 bits")
            }
        }
    }

    private mutating func advance(_ count: UInt64, _ what: String) throws(Failure) -> Range<Int> {
        guard count <= UInt64(end - offset) else {
            throw Failure(reason: "\(what) of \(count) bytes runs past the end (\(end - offset) bytes left)")
        }
        let start = offset
        offset += Int(count)
        return start..<offset
    }

    private mutating func value(_ wireType: UInt64, number: UInt64, depth: Int) throws(Failure) -> Value {
        switch wireType {
        case 0: return .varint(try varint())
        case 1:
            _ = try advance(8, "a 64-bit value")
            return .other
        case 2: return .bytes(try advance(try varint(), "a length-delimited value"))
        case 5:
            _ = try advance(4, "a 32-bit value")
            return .other
        case 3:
            guard depth < Self.maximumGroupDepth else { throw Failure(reason: "groups nested too deeply") }
            while true {
                guard offset < end else { throw Failure(reason: "group of field number \(number) is not closed") }
                let inner = try tag()
                if inner.wireType == 4 {
                    guard inner.number == number else {
                        throw Failure(reason: "group of field number \(number) closed by field number \(inner.number)")
                    }
                    return .other
                }
                _ = try value(inner.wireType, number: inner.number, depth: depth + 1)
            }
        case 4: throw Failure(reason: "end-group key for field number \(number) without a start-group")
        default: throw Failure(reason: "invalid wire type \(wireType) for field number \(number)")
        }
    }
}
