import CommandLineSupport
import ProtoSchema

/// `rpc-probe HOST:PORT protoset [-o FILE]`: saves the server's schema as a `FileDescriptorSet`,
/// for `--protoset` when that server (or another build of it) is unreachable or has no reflection.
enum ProtosetCommand: ProbeVerb {
    static let name = "protoset"

    static let help = """
        usage: rpc-probe [flags] HOST:PORT protoset [-o FILE]

        Fetches the server's schema through reflection (mrpc.reflection.v1.Reflection/
        GetFileDescriptorSet), checks that it parses, and writes it as a binary FileDescriptorSet (the
        format of protoc --descriptor_set_out) to FILE or to standard output, for later use as
        --protoset FILE. Refuses to write binary to a terminal. With --grpc, the files come from
        gRPC's standard reflection (every listed service's file and its imports).

        protoset flags:
          -o FILE, --output FILE   write to FILE (created or replaced) instead of standard output
        """

    /// Where to write the schema; nil for standard output.
    struct Flags {
        var output: String?
    }

    static let defaults = Flags()

    static let flags: [ProbeFlag<Flags>] = [
        ProbeFlag("-o", "--output") { flags, value in flags.output = value.text }
    ]

    static func run(_ flags: Flags, arguments positionals: [String], options: ProbeOptions) throws(ProbeError)
        -> Int32
    {
        let output = flags.output
        guard positionals.isEmpty else {
            throw .usage("protoset: unexpected argument '\(positionals[0])' (see rpc-probe protoset --help)")
        }
        guard output != nil || !ProbeOutput.standardOutputIsTerminal else {
            throw .usage("protoset: standard output is a terminal; redirect it (> FILE) or use -o FILE")
        }
        let session = ProbeSession(options: options)
        let bytes = try session.fetchDescriptorSet()
        let schema: Schema
        do throws(ProtoSchemaError) {
            schema = try Schema(fileDescriptorSet: bytes)
        } catch {
            throw .failure("the server's descriptor set is not valid: \(error.message)")
        }
        if let output {
            try ProbeOutput.File(creating: output).write(bytes)
        } else {
            ProbeOutput.standardOutputBytes(bytes)
        }
        if options.verbose {
            printError(
                "\(bytes.count) bytes: \(schema.fileNames.count) files, \(schema.services.count) services, "
                    + "\(schema.messages.count) message types")
        }
        return 0
    }
}
