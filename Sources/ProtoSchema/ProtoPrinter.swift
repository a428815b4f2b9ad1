/// Renders descriptors back in .proto syntax, the way `grpcurl describe` shows them.
///
/// Lets `rpc-probe describe SYMBOL` show a service, method, message, enum or field of a server it
/// only knows through its descriptor set, with the comments the authors wrote. Message and enum
/// types are written fully qualified with a leading dot, so every name is unambiguous.
struct ProtoPrinter {
    private var lines: [String] = []
    private var indent = 0

    static func text(_ body: (inout ProtoPrinter) -> Void) -> String {
        var printer = ProtoPrinter()
        body(&printer)
        return printer.lines.joined(separator: "\n") + "\n"
    }

    mutating func line(_ text: String) {
        lines.append(String(repeating: "  ", count: indent) + text)
    }

    /// A declaration with a body in braces (`service`, `message`, `oneof`, `enum`): its leading
    /// comment, `opening {`, what `body` prints one level deeper, and `}`.
    mutating func block(_ opening: String, comments text: String?, _ body: (inout Self) -> Void) {
        comments(text)
        line(opening + " {")
        indent += 1
        body(&self)
        indent -= 1
        line("}")
    }

    /// The leading comment, one `//` line per line of it.
    mutating func comments(_ text: String?) {
        guard let text, !text.isEmpty else { return }
        var body = Substring(text)
        if body.hasSuffix("\n") { body = body.dropLast() }
        for commentLine in body.split(separator: "\n", omittingEmptySubsequences: false) {
            line("//" + commentLine)
        }
    }

    mutating func service(_ service: ServiceDescriptor) {
        block("service \(service.name)", comments: service.leadingComments) { printer in
            for method in service.methods { printer.method(method) }
        }
    }

    mutating func method(_ method: MethodDescriptor) {
        comments(method.leadingComments)
        let input = (method.clientStreaming ? "stream " : "") + "." + method.inputType.fullName
        let output = (method.serverStreaming ? "stream " : "") + "." + method.outputType.fullName
        line("rpc \(method.name) ( \(input) ) returns ( \(output) );")
    }

    mutating func message(_ message: MessageDescriptor) {
        block("message \(message.name)", comments: message.leadingComments) { printer in
            if message.isMapEntry { printer.line("option map_entry = true;") }
            var printedOneofs: Set<Int> = []
            for field in message.fields {
                if let oneof = field.containingOneof {
                    guard printedOneofs.insert(oneof.index).inserted else { continue }
                    printer.block("oneof \(oneof.name)", comments: oneof.leadingComments) { printer in
                        for member in oneof.fields { printer.field(member) }
                    }
                } else {
                    printer.field(field)
                }
            }
            for nested in message.nestedMessages where !nested.isMapEntry { printer.message(nested) }
            for nested in message.nestedEnums { printer.enumType(nested) }
        }
    }

    mutating func field(_ field: FieldDescriptor) {
        comments(field.leadingComments)
        var options: [String] = []
        if field.jsonName != SchemaBuilder.jsonName(field.name) {
            options.append("json_name = \(JSONWriter.quoted(field.jsonName))")
        }
        if field.isRepeated && field.type.isPackable && !field.isMap {
            let packedByDefault = Self.syntax(of: field) != "proto2" && Self.syntax(of: field) != ""
            if field.isPacked != packedByDefault { options.append("packed = \(field.isPacked)") }
        }
        let suffix = options.isEmpty ? "" : " [\(options.joined(separator: ", "))]"
        line("\(Self.declaration(of: field)) = \(field.number)\(suffix);")
    }

    private static func syntax(of field: FieldDescriptor) -> String {
        field.containingMessage.storage.files[field.containingMessage.info.fileIndex].syntax
    }

    mutating func enumType(_ enumType: EnumDescriptor) {
        block("enum \(enumType.name)", comments: enumType.leadingComments) { printer in
            for value in enumType.values {
                printer.comments(value.leadingComments)
                printer.line("\(value.name) = \(value.number);")
            }
        }
    }

    /// "repeated string tags", "map<string, .pkg.V> results", "optional int64 x", ….
    private static func declaration(of field: FieldDescriptor) -> String {
        if field.isMap, let key = field.mapKey, let value = field.mapValue {
            return "map<\(typeName(of: key)), \(typeName(of: value))> \(field.name)"
        }
        let label: String
        switch field.label {
        case .repeated: label = "repeated "
        case .required: label = "required "
        case .optional:
            let proto2 = syntax(of: field) != "proto3"
            label = field.isProto3Optional || (proto2 && field.containingOneof == nil) ? "optional " : ""
        }
        return "\(label)\(typeName(of: field)) \(field.name)"
    }

    private static func typeName(of field: FieldDescriptor) -> String {
        switch field.type {
        case .message, .group, .enum: "." + field.info.typeName
        default: field.type.description
        }
    }
}
