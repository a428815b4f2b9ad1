import ProtoSchema
import RPCCore
import RPCPosix

/// What a verb works with: a connection opened when first needed, and the schema (from
/// `--protoset`, else the server's reflection) loaded when first needed.
final class ProbeSession {
    let options: ProbeOptions
    private var connection: ClientConnection?
    private var schema: Schema?

    init(options: ProbeOptions) { self.options = options }

    deinit { connection?.close() }

    func connect() throws(ProbeError) -> ClientConnection {
        if let connection { return connection }
        let fresh = try ClientConnection.probeConnect(try options.clientOptions())
        connection = fresh
        return fresh
    }

    func loadSchema() throws(ProbeError) -> Schema {
        if let schema { return schema }
        let loaded = try SchemaLoader.load(options) { () throws(ProbeError) -> ClientConnection in try connect() }
        schema = loaded
        return loaded
    }

    func method(_ name: String) throws(ProbeError) -> MethodDescriptor {
        let schema = try loadSchema()
        do throws(ProtoSchemaError) {
            return try schema.requireMethod(named: name)
        } catch {
            throw .failure(error.message)
        }
    }

    /// Parses `json` as a request of `method`.
    func request(_ json: String, for method: MethodDescriptor) throws(ProbeError) -> [UInt8] {
        do throws(ProtoSchemaError) {
            return try DynamicMessage(jsonString: json, as: method.inputType).serializedBytes()
        } catch {
            throw .failure("invalid request for \(method.fullName): \(error.message)")
        }
    }
}

/// Verb-level flag reading shared by the verbs: shared flags first, then the verb's own.
extension ArgumentReader {
    /// Reads the rest of the command line: shared flags into `options`, the verb's flags through
    /// `flag` (which returns false for a flag it does not know), positionals into the result.
    mutating func readVerb(
        _ verb: String, options: inout ProbeOptions, help: String,
        flag: (String, String?, inout ArgumentReader) throws(ProbeError) -> Bool
    ) throws(ProbeError) -> [String]? {
        var positionals: [String] = []
        while !isEmpty {
            if let (name, inline) = self.flag() {
                if name == "--help" || name == "-h" {
                    print(help)
                    return nil
                }
                if try options.accept(name, inline: inline, from: &self) { continue }
                guard try flag(name, inline, &self) else { throw .usage("\(verb): unknown flag \(name) (see \(verb) --help)") }
            } else if let positional = positional() {
                positionals.append(positional)
            }
        }
        return positionals
    }
}
