import CommandLineSupport
import ProtoSchema

/// `rpc-probe HOST:PORT list [SERVICE]`: services, or one service's methods.
enum ListCommand: ProbeVerb {
    static let name = "list"

    static let help = """
        usage: rpc-probe [flags] HOST:PORT list [SERVICE]
               rpc-probe --protoset FILE list [SERVICE]

        Without SERVICE, prints every service's fully-qualified name, one a line, sorted; with it, that
        service's methods as SERVICE.METHOD in declaration order, server-streaming ones marked
        "(server stream)". Uses the server's reflection, or --protoset FILE (then HOST:PORT may be
        omitted).
        """

    static func run(_ flags: NoFlags, arguments positionals: [String], options: ProbeOptions) throws(ProbeError)
        -> Int32
    {
        guard positionals.count <= 1 else {
            throw .usage("list: expected at most one SERVICE (see rpc-probe list --help)")
        }
        let schema = try ProbeSession(options: options).loadSchema()
        if let name = positionals.first {
            guard let service = schema.service(named: name) else {
                throw .failure(
                    "list: no service \(name) (known: \(schema.services.map(\.fullName).sorted().joined(separator: ", ")))"
                )
            }
            for method in service.methods {
                ProbeOutput.standardOutput(
                    "\(service.fullName).\(method.name)" + (method.serverStreaming ? " (server stream)" : ""))
            }
        } else {
            for service in schema.services.map(\.fullName).sorted() { ProbeOutput.standardOutput(service) }
        }
        return 0
    }
}
