/// Turns decoded `FileDescriptorProto`s into the resolved tables of a `SchemaStorage`.
///
/// It drops repeated copies of a file (a server may serve the concatenation of two sets that both
/// include a shared import), gives every message and enum a fully-qualified name, resolves each
/// `type_name` the way protoc does (absolute with a leading dot, else from the innermost scope
/// outwards) and refuses what would make the codecs guess: unresolved or duplicate names, field
/// numbers out of range or repeated, malformed map entries.
struct SchemaBuilder {
    private typealias Raw = DescriptorSetDecoder
    private typealias Storage = SchemaStorage

    private struct PendingMessage {
        let raw: Raw.Message
        let fullName: String
        let fileIndex: Int
        let path: [Int32]
        let nestedMessages: [Int]
        let nestedEnums: [Int]
    }

    private struct PendingEnum {
        let raw: Raw.Enum
        let fullName: String
        let fileIndex: Int
        let path: [Int32]
    }

    private var files: [Raw.File] = []
    private var comments: [[[Int32]: String]] = []
    private var messages: [PendingMessage] = []
    private var enums: [PendingEnum] = []
    private var symbols: [String: Storage.Symbol] = [:]
    private var symbolFiles: [String: String] = [:]
    private var serviceCount = 0

    /// Builds the storage of `rawFiles`, keeping the first file of each name.
    static func build(_ rawFiles: [DescriptorSetDecoder.File]) throws(ProtoSchemaError) -> SchemaStorage {
        var builder = SchemaBuilder()
        var seen: Set<String> = []
        for file in rawFiles where seen.insert(file.name).inserted {
            builder.files.append(file)
        }
        try builder.declare()
        return try builder.resolve()
    }

    // MARK: - Declaring names

    private mutating func declare() throws(ProtoSchemaError) {
        for (fileIndex, file) in files.enumerated() {
            var fileComments: [[Int32]: String] = [:]
            for location in file.locations {
                if let text = location.leadingComments, fileComments[location.path] == nil {
                    fileComments[location.path] = text
                }
            }
            comments.append(fileComments)
            let scope = file.package
            for (i, message) in file.messages.enumerated() {
                _ = try declare(message, scope: scope, fileIndex: fileIndex, path: [4, Int32(i)])
            }
            for (i, enumType) in file.enums.enumerated() {
                _ = try declare(enumType, scope: scope, fileIndex: fileIndex, path: [5, Int32(i)])
            }
            for service in file.services {
                _ = try register(service.name, in: scope, kind: "service", file: file.name, as: .service(serviceCount))
                serviceCount += 1
            }
        }
    }

    private mutating func declare(
        _ message: Raw.Message, scope: String, fileIndex: Int, path: [Int32]
    ) throws(ProtoSchemaError) -> Int {
        let index = messages.count
        let fullName = try register(
            message.name, in: scope, kind: "message", file: files[fileIndex].name, as: .message(index))
        // Reserve the index; nested types come after their parent.
        messages.append(
            PendingMessage(
                raw: message, fullName: fullName, fileIndex: fileIndex, path: path, nestedMessages: [], nestedEnums: [])
        )
        var nestedMessages: [Int] = []
        for (i, nested) in message.nested.enumerated() {
            nestedMessages.append(
                try declare(nested, scope: fullName, fileIndex: fileIndex, path: path + [3, Int32(i)]))
        }
        var nestedEnums: [Int] = []
        for (i, nested) in message.enums.enumerated() {
            nestedEnums.append(try declare(nested, scope: fullName, fileIndex: fileIndex, path: path + [4, Int32(i)]))
        }
        messages[index] = PendingMessage(
            raw: message, fullName: fullName, fileIndex: fileIndex, path: path,
            nestedMessages: nestedMessages, nestedEnums: nestedEnums)
        return index
    }

    private mutating func declare(
        _ enumType: Raw.Enum, scope: String, fileIndex: Int, path: [Int32]
    ) throws(ProtoSchemaError) -> Int {
        let index = enums.count
        let fullName = try register(
            enumType.name, in: scope, kind: "enum", file: files[fileIndex].name, as: .enumType(index))
        enums.append(PendingEnum(raw: enumType, fullName: fullName, fileIndex: fileIndex, path: path))
        return index
    }

    private func qualified(_ name: String, in scope: String, kind: String, file: String) throws(ProtoSchemaError)
        -> String
    {
        guard !name.isEmpty, !name.contains(".") else {
            throw Self.error("a \(kind) in \(file) has \(name.isEmpty ? "no name" : "the invalid name \"\(name)\"")")
        }
        return scope.isEmpty ? name : "\(scope).\(name)"
    }

    /// Declares a message, enum or service (`kind`) of `file` under its name in `scope`.
    /// - Returns: its full name.
    /// - Throws: for a name that is empty or dotted, or one already declared.
    private mutating func register(
        _ name: String, in scope: String, kind: String, file: String, as symbol: Storage.Symbol
    ) throws(ProtoSchemaError) -> String {
        let fullName = try qualified(name, in: scope, kind: kind, file: file)
        if let other = symbolFiles[fullName] {
            throw Self.error("\(fullName) is defined twice (in \(other) and in \(file))")
        }
        symbols[fullName] = symbol
        symbolFiles[fullName] = file
        return fullName
    }

    // MARK: - Resolving references

    private func resolve() throws(ProtoSchemaError) -> SchemaStorage {
        var messageInfos: [Storage.MessageInfo] = []
        messageInfos.reserveCapacity(messages.count)
        for pending in messages {
            messageInfos.append(try messageInfo(pending))
        }
        let enumInfos = try enums.map { (pending) throws(ProtoSchemaError) in try enumInfo(pending) }
        var serviceInfos: [Storage.ServiceInfo] = []
        for (fileIndex, file) in files.enumerated() {
            for (i, service) in file.services.enumerated() {
                serviceInfos.append(try serviceInfo(service, fileIndex: fileIndex, path: [6, Int32(i)]))
            }
        }
        // Methods become symbols only now: their names are checked with their service.
        var allSymbols = symbols
        for (index, service) in serviceInfos.enumerated() {
            for (m, method) in service.methods.enumerated() {
                allSymbols["\(service.fullName).\(method.name)"] = .method(service: index, method: m)
            }
        }
        let fileInfos = files.map {
            Storage.FileInfo(name: $0.name, package: $0.package, dependencies: $0.dependencies, syntax: $0.syntax)
        }
        return SchemaStorage(
            files: fileInfos, messages: messageInfos, enums: enumInfos, services: serviceInfos, symbols: allSymbols)
    }

    private func messageInfo(_ pending: PendingMessage) throws(ProtoSchemaError) -> Storage.MessageInfo {
        let raw = pending.raw
        let syntax = files[pending.fileIndex].syntax
        let isProto3 = syntax == "proto3"
        var fields: [Storage.FieldInfo] = []
        var numbers: Set<Int32> = []
        var oneofMembers = Array(repeating: [Int](), count: raw.oneofs.count)
        for (i, field) in raw.fields.enumerated() {
            let subject = "field \"\(field.name)\" of \(pending.fullName)"
            guard !field.name.isEmpty else { throw Self.error("field #\(i + 1) of \(pending.fullName) has no name") }
            guard field.number >= 1, UInt64(field.number) <= WireReader.maximumFieldNumber else {
                throw Self.error("\(subject) has the invalid number \(field.number)")
            }
            guard numbers.insert(field.number).inserted else {
                throw Self.error("\(subject) reuses the number \(field.number)")
            }
            guard let label = field.label == 0 ? .optional : FieldLabel(rawValue: field.label) else {
                throw Self.error("\(subject) has the invalid label \(field.label)")
            }
            var type: FieldType
            var typeName = ""
            var messageIndex: Int?
            var enumIndex: Int?
            if field.type != 0 {
                guard let known = FieldType(rawValue: field.type) else {
                    throw Self.error("\(subject) has the invalid type \(field.type)")
                }
                type = known
            } else {
                type = .message // decided by what the type name refers to, below
                guard !field.typeName.isEmpty else { throw Self.error("\(subject) has no type") }
            }
            if type == .message || type == .enum || type == .group {
                guard let symbol = lookUp(field.typeName, scope: pending.fullName) else {
                    throw Self.error(
                        "\(subject) has the type \(field.typeName), which the descriptor set does not define")
                }
                switch symbol {
                case .message(let index) where type != .enum:
                    messageIndex = index
                    typeName = messages[index].fullName
                case .enumType(let index) where type == .enum || field.type == 0:
                    type = .enum
                    enumIndex = index
                    typeName = enums[index].fullName
                default:
                    throw Self.error("\(subject) is declared as \(type) but its type \(field.typeName) is not one")
                }
            }
            var oneofIndex: Int?
            if let index = field.oneofIndex {
                guard index >= 0, Int(index) < raw.oneofs.count else {
                    throw Self.error("\(subject) is in oneof #\(index), which \(pending.fullName) does not declare")
                }
                guard label != .repeated else { throw Self.error("\(subject) is repeated inside a oneof") }
                oneofIndex = Int(index)
                oneofMembers[Int(index)].append(i)
            }
            let isMap =
                label == .repeated && type == .message && messageIndex.map { messages[$0].raw.isMapEntry } == true
            let isPacked =
                label == .repeated && type.isPackable && (field.packed ?? (syntax == "proto3" || syntax == "editions"))
            let hasPresence =
                label != .repeated
                && (type == .message || type == .group || oneofIndex != nil || field.proto3Optional || !isProto3)
            fields.append(
                Storage.FieldInfo(
                    name: field.name,
                    jsonName: field.jsonName ?? Self.jsonName(field.name),
                    number: field.number,
                    label: label,
                    type: type,
                    typeName: typeName,
                    messageIndex: messageIndex,
                    enumIndex: enumIndex,
                    oneofIndex: oneofIndex,
                    proto3Optional: field.proto3Optional,
                    isPacked: isPacked,
                    isMap: isMap,
                    hasPresence: hasPresence,
                    comments: comment(pending.fileIndex, pending.path + [2, Int32(i)])))
        }
        let oneofs = raw.oneofs.enumerated().map { i, name in
            let members = oneofMembers[i]
            return Storage.OneofInfo(
                name: name,
                fieldIndices: members,
                isSynthetic: members.count == 1 && fields[members[0]].proto3Optional,
                comments: comment(pending.fileIndex, pending.path + [8, Int32(i)]))
        }
        if raw.isMapEntry {
            let key = fields.first { $0.number == 1 }
            let value = fields.first { $0.number == 2 }
            guard fields.count == 2, let key, let value, key.name == "key", value.name == "value",
                key.label != .repeated, value.label != .repeated, key.type.isValidMapKey, value.type != .group
            else {
                throw Self.error(
                    "\(pending.fullName) is marked as a map entry but is not a valid one (key = 1, value = 2)")
            }
        }
        return Storage.MessageInfo(
            fullName: pending.fullName, name: raw.name, fileIndex: pending.fileIndex, fields: fields, oneofs: oneofs,
            isMapEntry: raw.isMapEntry, nestedMessages: pending.nestedMessages, nestedEnums: pending.nestedEnums,
            comments: comment(pending.fileIndex, pending.path))
    }

    private func enumInfo(_ pending: PendingEnum) throws(ProtoSchemaError) -> Storage.EnumInfo {
        guard !pending.raw.values.isEmpty else { throw Self.error("enum \(pending.fullName) has no values") }
        let values = pending.raw.values.enumerated().map { i, value in
            Storage.EnumValueInfo(
                name: value.name, number: value.number,
                comments: comment(pending.fileIndex, pending.path + [2, Int32(i)]))
        }
        return Storage.EnumInfo(
            fullName: pending.fullName, name: pending.raw.name, fileIndex: pending.fileIndex, values: values,
            comments: comment(pending.fileIndex, pending.path))
    }

    private func serviceInfo(_ service: Raw.Service, fileIndex: Int, path: [Int32]) throws(ProtoSchemaError)
        -> Storage.ServiceInfo
    {
        let package = files[fileIndex].package
        let fullName = package.isEmpty ? service.name : "\(package).\(service.name)"
        var methods: [Storage.MethodInfo] = []
        var names: Set<String> = []
        for (i, method) in service.methods.enumerated() {
            let subject = "method \"\(method.name)\" of \(fullName)"
            guard !method.name.isEmpty else { throw Self.error("method #\(i + 1) of \(fullName) has no name") }
            guard names.insert(method.name).inserted else { throw Self.error("\(subject) is declared twice") }
            guard case .message(let input)? = lookUp(method.inputType, scope: package) else {
                throw Self.error(
                    "\(subject) has the input type \(method.inputType), which the descriptor set does not define as a message"
                )
            }
            guard case .message(let output)? = lookUp(method.outputType, scope: package) else {
                throw Self.error(
                    "\(subject) has the output type \(method.outputType), which the descriptor set does not define as a message"
                )
            }
            methods.append(
                Storage.MethodInfo(
                    name: method.name, inputIndex: input, outputIndex: output,
                    clientStreaming: method.clientStreaming, serverStreaming: method.serverStreaming,
                    comments: comment(fileIndex, path + [2, Int32(i)])))
        }
        return Storage.ServiceInfo(
            fullName: fullName, name: service.name, fileIndex: fileIndex, methods: methods,
            comments: comment(fileIndex, path))
    }

    /// Resolves a type reference like protoc: ".a.b.C" is absolute; "b.C" is looked up in the
    /// scope, then in each enclosing scope.
    private func lookUp(_ name: String, scope: String) -> Storage.Symbol? {
        guard !name.isEmpty else { return nil }
        if name.hasPrefix(".") { return symbols[String(name.dropFirst())] }
        var scope = Substring(scope)
        while true {
            if let symbol = symbols[scope.isEmpty ? name : "\(scope).\(name)"] { return symbol }
            guard !scope.isEmpty else { return nil }
            scope = scope.lastIndex(of: ".").map { scope[..<$0] } ?? ""
        }
    }

    private func comment(_ fileIndex: Int, _ path: [Int32]) -> String? {
        comments[fileIndex][path]
    }

    /// protoc's default `json_name`: underscores dropped, the letter after each one upper-cased.
    static func jsonName(_ name: String) -> String {
        var result = ""
        var capitalizeNext = false
        for character in name {
            if character == "_" {
                capitalizeNext = true
            } else if capitalizeNext {
                result += character.uppercased()
                capitalizeNext = false
            } else {
                result.append(character)
            }
        }
        return result
    }

    private static func error(_ message: String) -> ProtoSchemaError {
        ProtoSchemaError(code: .invalidDescriptor, message: "invalid descriptor set: \(message)")
    }
}
