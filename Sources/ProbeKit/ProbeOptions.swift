import CommandLineSupport
import RPCPosix
import TLSSupport

/// The flags every verb shares: how to reach and authenticate with the server, how to fill the
/// CallHeader, and where the schema comes from.
///
/// Shared flags may come before the address, between it and the verb, or after the verb.
struct ProbeOptions {
    var address: String?
    var apiKey = ""
    var onBehalfOf = ""
    var metadata: [String: String] = [:]
    var timeoutSeconds = 0.0
    var connectTimeoutSeconds = 5.0
    var maxMessageBytes = 4 * 1024 * 1024
    var verbose = false
    /// `FileDescriptorSet` files used instead of the server's reflection (read as one set).
    var protosets: [String] = []
    /// TLS, asked for with `--tls` or any of the other TLS flags; nil speaks plaintext.
    var tls: TLSClientConfiguration?
    /// Speak standard gRPC (HTTP/2, h2c with prior knowledge) to the server's gRPC listener
    /// instead of our framed protocol.
    var grpc = false

    /// Consumes a shared flag; returns false when `name` is not one.
    mutating func accept(_ flag: ArgumentReader.Flag, from reader: inout ArgumentReader) throws(ArgumentError) -> Bool {
        switch flag.name {
        case "--api-key": apiKey = try reader.value(for: flag).text
        case "--as": onBehalfOf = try reader.value(for: flag).text
        case "-H", "--header":
            let pair = try reader.value(for: flag)
            guard let equals = pair.text.firstIndex(of: "="), equals != pair.text.startIndex else {
                throw pair.error("expected key=value, got '\(pair.text)'")
            }
            metadata[String(pair.text[..<equals])] = String(pair.text[pair.text.index(after: equals)...])
        case "--timeout": timeoutSeconds = try reader.value(for: flag).duration()
        case "--connect-timeout":
            let value = try reader.value(for: flag)
            connectTimeoutSeconds = try value.duration()
            guard connectTimeoutSeconds >= 0.001 else { throw value.error("must be at least 1ms") }
        case "--max-msg-bytes": maxMessageBytes = try reader.value(for: flag).integer(in: 1024...(1 << 30))
        case "--protoset": protosets.append(try reader.value(for: flag).text)
        case "-v", "--verbose": verbose = try flag.booleanValue()
        case "--grpc": grpc = try flag.booleanValue()
        // Every TLS flag asks for TLS: a CA file given for a plaintext connection is surely a slip.
        case "--tls":
            if try flag.booleanValue() { tls = tls ?? TLSClientConfiguration() } else { tls = nil }
        case "--cacert":
            let file = try reader.value(for: flag).text
            tls = tls ?? TLSClientConfiguration()
            tls?.caFile = file
        case "--cert":
            let file = try reader.value(for: flag).text
            tls = tls ?? TLSClientConfiguration()
            tls?.certificateChainFile = file
        case "--key":
            let file = try reader.value(for: flag).text
            tls = tls ?? TLSClientConfiguration()
            tls?.privateKeyFile = file
        case "--servername":
            let name = try reader.value(for: flag).text
            tls = tls ?? TLSClientConfiguration()
            tls?.serverName = name
        case "--tls-insecure-skip-verify":
            if try flag.booleanValue() {
                tls = tls ?? TLSClientConfiguration()
                tls?.verifiesPeer = false
            }
        default: return false
        }
        return true
    }

    /// Client options for the server address.
    func clientOptions() throws(ProbeError) -> ClientOptions {
        guard let address else {
            throw .usage("missing HOST:PORT (only list and describe with --protoset work without a server)")
        }
        let server: HostPort
        do throws(ArgumentError) {
            server = try ArgumentValue(address, name: nil).hostPort(ports: 1...UInt16.max, defaultHost: "127.0.0.1")
        } catch {
            throw .usage(error.message)
        }
        var options = ClientOptions(host: server.host, port: server.port, apiKey: apiKey)
        options.clientName = "rpc-probe"
        options.connectTimeoutMs = max(1, Int(connectTimeoutSeconds * 1000))
        options.maxMessageBytes = maxMessageBytes
        if let tls, (tls.certificateChainFile == nil) != (tls.privateKeyFile == nil) {
            throw .usage(tls.certificateChainFile == nil ? "--key needs --cert" : "--cert needs --key")
        }
        options.tls = tls
        return options
    }

    /// The server's host and port, for the gRPC client (which takes no TLS flag yet).
    func grpcServer() throws(ProbeError) -> HostPort {
        let options = try clientOptions()
        guard options.tls == nil else {
            throw .usage("--grpc speaks plaintext HTTP/2 (h2c) only; drop the TLS flags (the gRPC listener has no TLS)")
        }
        return HostPort(host: options.host, port: options.port)
    }

    /// The gRPC request metadata from the shared flags: the key as `authorization: Bearer`, `--as`
    /// as `x-on-behalf-of`, `-H` as custom fields.
    func grpcMetadata() -> GRPCProbeClient.Metadata {
        GRPCProbeClient.Metadata(apiKey: apiKey, onBehalfOf: onBehalfOf, custom: metadata)
    }

    /// Call options from the shared flags.
    func callOptions() -> CallOptions {
        CallOptions(
            timeoutMs: UInt32(min(timeoutSeconds * 1000, Double(UInt32.max))), onBehalfOf: onBehalfOf,
            metadata: metadata)
    }

    static let help = """
        shared flags (before or after the verb):
          --api-key KEY          API key, bare or APP_ID:KEY (default: $RPC_PROBE_API_KEY)
          --as UID               act on behalf of this user (CallHeader.on_behalf_of; default: the app)
          -H key=value           call metadata (CallHeader.metadata; repeatable)
          --timeout D            deadline of each call, e.g. 2s, 500ms (default: none)
          --connect-timeout D    connect and handshake timeout (default: 5s)
          --max-msg-bytes N      largest response message accepted, in bytes (default: 4194304)
          --protoset FILE        a FileDescriptorSet to use instead of the server's reflection
                                 (repeatable; with it, list and describe need no HOST:PORT)
          -v                     verbose: server, sizes and timings on standard error
          --grpc                 speak standard gRPC (HTTP/2, plaintext h2c) to a gRPC listener
                                 (moderation-server --grpc-listen, 127.0.0.1:7601 by default) or
                                 any gRPC server with reflection; list/describe use gRPC
                                 reflection, health grpc.health.v1 (bench is not supported yet)

        TLS (the server's --tls-cert; without these flags rpc-probe speaks plaintext):
          --tls                  connect with TLS, checking the server's certificate against the
                                 system's CAs and its name against HOST (or --servername)
          --cacert FILE          trust the CA certificates in FILE (PEM) instead; implies --tls
          --cert FILE --key FILE a client certificate and its key (PEM), for a server that asks
                                 for one (--tls-client-ca); implies --tls
          --servername NAME      the name the server's certificate must carry (and SNI), when it
                                 is not HOST; implies --tls
          --tls-insecure-skip-verify
                                 check nothing about the server's certificate: FOR TESTS ONLY,
                                 anyone on the path can read the traffic, API key included
        """
}
