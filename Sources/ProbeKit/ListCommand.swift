import ProtoSchema

/// `rpc-probe HOST:PORT list [SERVICE]`: services, or one service's methods.
enum ListCommand {
    static let help = """
    usage: rpc-probe [flags] HOST:PORT list [SERVICE]

    Without SERVICE, prints every service's fully-qualified name; with it, that service's methods
    as SERVICE.METHOD (streaming ones marked "(server stream)"). Uses the server's reflection, or
    --protoset FILE (then HOST:PORT may be omitted).
    """

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        guard let positionals = try reader.readVerb("list", options: &options, help: help, flag: { _, _, _ in false }) else { return 0 }
        guard positionals.count <= 1 else { throw .usage("list: expected at most one SERVICE") }
        let schema = try ProbeSession(options: options).loadSchema()
        if let name = positionals.first {
            guard let service = schema.service(named: name) else {
                throw .failure("list: no service \(name) (known: \(schema.services.map(\.fullName).sorted().joined(separator: ", ")))")
            }
            for method in service.methods {
                print("\(service.fullName).\(method.name)" + (method.serverStreaming ? " (server stream)" : ""))
            }
        } else {
            for service in schema.services.map(\.fullName).sorted() { print(service) }
        }
        return 0
    }
}
