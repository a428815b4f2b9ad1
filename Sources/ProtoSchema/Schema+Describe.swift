import NameSuggestion

extension Schema {
    /// Describes a symbol in .proto syntax, as `grpcurl describe SYMBOL` does: a first line
    /// saying what the symbol is ("moderation.v1.Moderation is a service:"), then its comments
    /// and declaration.
    ///
    /// - Parameter symbol: the fully-qualified name of a service, method, message, enum or field,
    ///   with or without a leading dot; a method may also be given as "pkg.Service/Method" or as
    ///   its path "/pkg.Service/Method".
    /// - Throws: `ProtoSchemaError` (`.unknownSymbol`) when nothing has that name, with the
    ///   closest name the schema has when one is near.
    public func describe(_ symbol: String) throws(ProtoSchemaError) -> String {
        let name = Self.withoutLeadingDot(symbol)
        if let service = service(named: name) {
            return "\(service.fullName) is a service:\n" + ProtoPrinter.text { $0.service(service) }
        }
        if let method = method(named: name) {
            return "\(method.fullName) is a method:\n" + ProtoPrinter.text { $0.method(method) }
        }
        if let message = message(named: name) {
            return "\(message.fullName) is a message:\n" + ProtoPrinter.text { $0.message(message) }
        }
        if let enumType = enumType(named: name) {
            return "\(enumType.fullName) is an enum:\n" + ProtoPrinter.text { $0.enumType(enumType) }
        }
        if let dot = name.lastIndex(of: "."), let message = message(named: String(name[..<dot])),
            let field = message.field(named: String(name[name.index(after: dot)...]))
        {
            return "\(field.fullName) is a field:\n" + ProtoPrinter.text { $0.field(field) }
        }
        let hint = Suggestion.hint(for: name.replacingSlashes(), among: storage.symbols.keys.sorted())
        throw ProtoSchemaError(
            code: .unknownSymbol,
            message: "no service, method, message, enum or field named \"\(name)\" in the schema\(hint)")
    }
}
