/// The resolved, immutable tables behind a `Schema` and every descriptor handle it gives out.
///
/// Message types may refer to each other in cycles (a message may contain itself), so descriptors
/// cannot hold each other directly without leaking; instead every cross-reference is an index into
/// these tables and the public descriptors are small `(storage, index)` handles.
final class SchemaStorage: Sendable {
    struct FileInfo: Sendable {
        let name: String
        let package: String
        let dependencies: [String]
        let syntax: String
    }

    struct FieldInfo: Sendable {
        let name: String
        let jsonName: String
        let number: Int32
        let label: FieldLabel
        let type: FieldType
        /// Fully-qualified name (no leading dot) of the message or enum type, else "".
        let typeName: String
        let messageIndex: Int?
        let enumIndex: Int?
        /// Index into the containing message's `oneofs` (real or synthetic), if any.
        let oneofIndex: Int?
        let proto3Optional: Bool
        let isPacked: Bool
        let isMap: Bool
        let hasPresence: Bool
        let comments: String?

        var isRepeated: Bool { label == .repeated }
    }

    struct OneofInfo: Sendable {
        let name: String
        let fieldIndices: [Int]
        /// The oneof protoc makes up for a proto3 `optional` field; not a oneof to users.
        let isSynthetic: Bool
        let comments: String?
    }

    final class MessageInfo: Sendable {
        let fullName: String
        let name: String
        let fileIndex: Int
        let fields: [FieldInfo]
        let oneofs: [OneofInfo]
        let isMapEntry: Bool
        let nestedMessages: [Int]
        let nestedEnums: [Int]
        let comments: String?
        /// Field indices ordered by field number: the order fields are encoded in.
        let encodingOrder: [Int]
        let fieldByNumber: [Int32: Int]
        let fieldByName: [String: Int]
        let fieldByJSONName: [String: Int]

        init(
            fullName: String, name: String, fileIndex: Int, fields: [FieldInfo], oneofs: [OneofInfo],
            isMapEntry: Bool, nestedMessages: [Int], nestedEnums: [Int], comments: String?
        ) {
            self.fullName = fullName
            self.name = name
            self.fileIndex = fileIndex
            self.fields = fields
            self.oneofs = oneofs
            self.isMapEntry = isMapEntry
            self.nestedMessages = nestedMessages
            self.nestedEnums = nestedEnums
            self.comments = comments
            self.encodingOrder = fields.indices.sorted { fields[$0].number < fields[$1].number }
            var byNumber: [Int32: Int] = [:]
            var byName: [String: Int] = [:]
            var byJSONName: [String: Int] = [:]
            for (index, field) in fields.enumerated() {
                byNumber[field.number] = index
                byName[field.name] = index
                byJSONName[field.jsonName] = index
            }
            self.fieldByNumber = byNumber
            self.fieldByName = byName
            self.fieldByJSONName = byJSONName
        }
    }

    struct EnumValueInfo: Sendable {
        let name: String
        let number: Int32
        let comments: String?
    }

    final class EnumInfo: Sendable {
        let fullName: String
        let name: String
        let fileIndex: Int
        let values: [EnumValueInfo]
        let comments: String?
        /// The first value declared with each number (aliases share a number).
        let valueByNumber: [Int32: Int]
        let valueByName: [String: Int]

        init(fullName: String, name: String, fileIndex: Int, values: [EnumValueInfo], comments: String?) {
            self.fullName = fullName
            self.name = name
            self.fileIndex = fileIndex
            self.values = values
            self.comments = comments
            var byNumber: [Int32: Int] = [:]
            var byName: [String: Int] = [:]
            for (index, value) in values.enumerated() {
                if byNumber[value.number] == nil { byNumber[value.number] = index }
                byName[value.name] = index
            }
            self.valueByNumber = byNumber
            self.valueByName = byName
        }
    }

    struct MethodInfo: Sendable {
        let name: String
        let inputIndex: Int
        let outputIndex: Int
        let clientStreaming: Bool
        let serverStreaming: Bool
        let comments: String?
    }

    struct ServiceInfo: Sendable {
        let fullName: String
        let name: String
        let fileIndex: Int
        let methods: [MethodInfo]
        let comments: String?
    }

    /// What a fully-qualified name refers to.
    enum Symbol: Sendable, Hashable {
        case message(Int)
        case enumType(Int)
        case service(Int)
        case method(service: Int, method: Int)
    }

    let files: [FileInfo]
    let messages: [MessageInfo]
    let enums: [EnumInfo]
    let services: [ServiceInfo]
    let symbols: [String: Symbol]

    init(
        files: [FileInfo], messages: [MessageInfo], enums: [EnumInfo], services: [ServiceInfo],
        symbols: [String: Symbol]
    ) {
        self.files = files
        self.messages = messages
        self.enums = enums
        self.services = services
        self.symbols = symbols
    }
}
