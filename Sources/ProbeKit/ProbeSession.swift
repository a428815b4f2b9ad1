import CommandLineSupport
import ProtoSchema
import RPCCore
import RPCMessages
import RPCPosix
import TLSSupport

/// What a verb works with: a connection opened when first needed, and the schema (from
/// `--protoset`, else the server's reflection) loaded when first needed, with the time each took.
final class ProbeSession {
    let options: ProbeOptions
    private var connection: ClientConnection?
    /// The connection of `--grpc`.
    private var grpcClient: GRPCProbeClient?
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
        let fresh: ClientConnection
        do throws(ProbeError) {
            fresh = try ClientConnection.probeConnect(clientOptions)
        } catch {
            throw options.maxTimeExceeded(Self.hintingGRPC(error, options: clientOptions), connecting: true)
        }
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

    /// A framed handshake the server ended without a word, from a server that answers HTTP/2:
    /// the user pointed the probe at a gRPC server and forgot `--grpc`.
    private static func hintingGRPC(_ error: ProbeError, options: ClientOptions) -> ProbeError {
        guard case .call(var failure) = error, failure.code == .unavailable, options.tls == nil,
            failure.message.contains("closed the connection"),
            GRPCProbeClient.answersHTTP2(host: options.host, port: options.port, timeoutMs: options.connectTimeoutMs)
        else { return error }
        failure.message +=
            " — \(options.host):\(options.port) speaks HTTP/2: it seems to be a gRPC server; add --grpc to speak "
            + "to it"
        return .call(failure)
    }

    /// The `--grpc` connection, opened when first needed (its time is `connectNanoseconds`).
    func connectGRPC() throws(ProbeError) -> GRPCProbeClient {
        if let grpcClient { return grpcClient }
        let (server, tls) = try options.grpcServer()
        let started = monotonicNow()
        defer { connectNanoseconds = monotonicNow() - started }
        let fresh: GRPCProbeClient
        do throws(RPCError) {
            let context: TLSContext?
            do throws(TLSError) {
                context = try tls.map { configuration throws(TLSError) in try TLSContext.client(configuration) }
            } catch {
                throw RPCError.unavailable("cannot set up TLS: \(error.message)")
            }
            fresh = try GRPCProbeClient.connect(
                host: server.host, port: server.port, tls: context, timeoutMs: options.connectTimeoutMs(),
                maxMessageBytes: options.maxMessageBytes)
        } catch {
            throw options.maxTimeExceeded(.call(error), connecting: true)
        }
        if options.verbose {
            let transport =
                fresh.tls.map { "h2, \($0.protocolVersion) \($0.cipherSuite)" } ?? "h2c, plaintext"
            printError("connected to \(fresh.authority): gRPC over HTTP/2 (\(transport))")
        }
        grpcClient = fresh
        return fresh
    }

    /// The server's serialized `FileDescriptorSet`: our reflection, or with `--grpc` gRPC's.
    func fetchDescriptorSet() throws(ProbeError) -> [UInt8] {
        if options.grpc {
            return try GRPCReflectionClient.fileDescriptorSet(
                try connectGRPC(), metadata: options.grpcMetadata(), timeoutMs: options.callOptions().timeoutMs)
        }
        let connection = try connect()
        let ack = connection.helloAck
        guard !options.noCache, let cache = options.schemaCache else {
            return try SchemaLoader.fetchDescriptorSet(from: connection, options: options)
        }
        guard SchemaCache.isUsable(ack.schemaDigest) else {
            if options.verbose {
                printError("schema: the server gives no schema digest; fetched by reflection, not cached")
            }
            return try SchemaLoader.fetchDescriptorSet(from: connection, options: options)
        }
        let (server, version, digest) = (ack.serverName, ack.serverVersion, ack.schemaDigest)
        if let kept = cache.lookup(server: server, version: version, digest: digest) {
            if options.verbose {
                printError(
                    "schema: \(kept.count) bytes from the cache, \(cache.path(server: server, version: version, digest: digest)) "
                        + "(the server's digest matches; no reflection call)")
            }
            return kept
        }
        let bytes = try SchemaLoader.fetchDescriptorSet(from: connection, options: options)
        guard SchemaCache.digest(of: bytes) == digest else {
            // Never keep a set under a digest it does not have: the next run would trust it.
            if options.verbose {
                printError("schema: the descriptor set's digest is not the one the server announced; not cached")
            }
            return bytes
        }
        let stored = cache.store(bytes, server: server, version: version, digest: digest)
        if options.verbose {
            printError(
                "schema: \(bytes.count) bytes fetched by reflection, "
                    + (stored.map { "kept in \($0)" } ?? "not cached (cannot write \(cache.directory))"))
        }
        return bytes
    }

    func loadSchema() throws(ProbeError) -> Schema {
        if let schema { return schema }
        // Connect first, so that the schema's time is the reflection call alone.
        if !options.hasSchemaFiles {
            if options.grpc { _ = try connectGRPC() } else { _ = try connect() }
        }
        let started = monotonicNow()
        let loaded = try SchemaLoader.load(options) { () throws(ProbeError) -> [UInt8] in try fetchDescriptorSet() }
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

    /// Parses `text` (JSON, or text format) as a request of `method`.
    func request(_ text: String, format: MessageFormat = .json, for method: MethodDescriptor) throws(ProbeError)
        -> [UInt8]
    {
        do throws(ProtoSchemaError) {
            return try format.parse(text, as: method.inputType).serializedBytes()
        } catch {
            throw .failure("invalid request for \(method.fullName): \(error.message)")
        }
    }
}
