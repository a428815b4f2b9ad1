import ProtoSchema
import RPCCore
import RPCMessages
import RPCPosix

/// What a verb works with: a connection opened when first needed, and the schema (from
/// `--protoset`, else the server's reflection) loaded when first needed, with the time each took.
final class ProbeSession {
    let options: ProbeOptions
    private var connection: ClientConnection?
    private var schema: Schema?
    /// Nanoseconds the connect and handshake took (also when they failed); nil before trying.
    private(set) var connectNanoseconds: UInt64?
    /// Nanoseconds loading the schema took, connecting excluded; nil before loading.
    private(set) var schemaNanoseconds: UInt64?

    init(options: ProbeOptions) { self.options = options }

    deinit { connection?.close() }

    func connect() throws(ProbeError) -> ClientConnection {
        if let connection { return connection }
        let clientOptions = try options.clientOptions()
        let started = monotonicNow()
        defer { connectNanoseconds = monotonicNow() - started }
        let fresh = try ClientConnection.probeConnect(clientOptions)
        if options.verbose {
            let ack = fresh.helloAck
            printError(
                "connected to \(clientOptions.host):\(clientOptions.port): \(ack.serverName) \(ack.serverVersion), "
                    + "app \(ack.appID), max message \(ack.maxMessageBytes) bytes, \(ack.maxConcurrentCalls) calls in flight"
                    + (fresh.tlsDescription.map { ", \($0)" } ?? ", plaintext")
            )
        }
        connection = fresh
        return fresh
    }

    func loadSchema() throws(ProbeError) -> Schema {
        if let schema { return schema }
        // Connect first, so that the schema's time is the reflection call alone.
        if options.protosets.isEmpty { _ = try connect() }
        let started = monotonicNow()
        let loaded = try SchemaLoader.load(options) { () throws(ProbeError) -> ClientConnection in try connect() }
        schemaNanoseconds = monotonicNow() - started
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
