import ProtoSchema

/// `rpc-probe HOST:PORT describe SYMBOL`: a service, method, message, enum or field as .proto text.
enum DescribeCommand {
    static let help = """
    usage: rpc-probe [flags] HOST:PORT describe SYMBOL

    Prints SYMBOL (a service, a method "pkg.Service.Method" or "/pkg.Service/Method", a message, an
    enum or a field) in .proto syntax with its comments, as grpcurl describe does. Uses the server's
    reflection, or --protoset FILE.
    """

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        guard let positionals = try reader.readVerb("describe", options: &options, help: help, flag: { _, _, _ in false }) else { return 0 }
        guard positionals.count == 1, let symbol = positionals.first else { throw .usage("describe: expected one SYMBOL") }
        let schema = try ProbeSession(options: options).loadSchema()
        do {
            print(try schema.describe(symbol))
        } catch {
            throw .failure("describe: \(error.message)")
        }
        return 0
    }
}
