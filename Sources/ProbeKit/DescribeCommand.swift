import CommandLineSupport
import ProtoSchema

/// `rpc-probe HOST:PORT describe [SYMBOL]`: a service, method, message, enum or field as .proto text.
enum DescribeCommand: ProbeVerb {
    static let name = "describe"

    static let help = """
        usage: rpc-probe [flags] HOST:PORT describe [SYMBOL]
               rpc-probe --protoset FILE describe [SYMBOL]

        Prints SYMBOL in .proto syntax with its comments, as grpcurl describe does: a service (its
        methods), a method ("pkg.Service.Method", "pkg.Service/Method" or "/pkg.Service/Method"; a
        server-streaming one shows "returns ( stream … )"), a message (its fields), an enum (its
        values) or a field ("pkg.Message.field"). Without SYMBOL, describes every service. Uses the
        server's reflection, or --protoset FILE (then HOST:PORT may be omitted).
        """

    static func run(_ flags: NoFlags, arguments positionals: [String], options: ProbeOptions) throws(ProbeError)
        -> Int32
    {
        guard positionals.count <= 1 else {
            throw .usage("describe: expected at most one SYMBOL (see rpc-probe describe --help)")
        }
        let schema = try ProbeSession(options: options).loadSchema()
        let symbols = positionals.isEmpty ? schema.services.map(\.fullName).sorted() : positionals
        for symbol in symbols {
            do throws(ProtoSchemaError) {
                ProbeOutput.standardOutput(try schema.describe(symbol))
            } catch {
                throw .failure("describe: \(error.message)")
            }
        }
        return 0
    }
}
