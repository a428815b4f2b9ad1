import CommandLineSupport
import RPCCore
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
    /// `--max-time`: how long the whole command may take (grpcurl's `-max-time`); nil for no limit.
    var maxTimeSeconds: Double?
    /// When the command started (monotonic nanoseconds): `--max-time` counts from here.
    var started = monotonicNow()
    var maxMessageBytes = 4 * 1024 * 1024
    var verbose = false
    /// `FileDescriptorSet` files used instead of the server's reflection (read as one set).
    var protosets: [String] = []
    /// `.proto` files compiled with protoc into the schema instead of the server's reflection
    /// (grpcurl's `-proto`), and the directories their imports are found in (`-import-path`).
    var protoFiles: [String] = []
    var importPaths: [String] = []
    /// TLS, asked for with `--tls` or any of the other TLS flags; nil speaks plaintext.
    var tls: TLSClientConfiguration?
    /// `-plaintext` was given: grpcurl's way to say "no TLS", which is rpc-probe's default.
    var plaintext = false
    /// Speak standard gRPC (HTTP/2: h2c with prior knowledge, or h2 under TLS) instead of our
    /// framed protocol.
    var grpc = false
    /// Where descriptor sets fetched by reflection are kept (`SchemaCache`); nil with
    /// `--no-cache`, or when the environment names no cache directory.
    var schemaCache: SchemaCache?
    /// `--no-cache`: fetch the schema by reflection every time, and keep nothing.
    var noCache = false

    /// True when the schema comes from files (`--protoset`, `-proto`), not from reflection.
    var hasSchemaFiles: Bool { !protosets.isEmpty || !protoFiles.isEmpty }

    /// The flags every verb shares. A name given here in its `--` form also answers to its
    /// single-dash form (`-max-time`), as grpcurl spells them.
    static let flags: [ProbeFlag<ProbeOptions>] = [
        ProbeFlag("--api-key") { options, value in options.apiKey = value.text },
        ProbeFlag("--as") { options, value in options.onBehalfOf = value.text },
        ProbeFlag("-H", "--header") { options, value throws(ArgumentError) in
            let (key, text) = try header(value)
            // grpcurl's way to send a key: the API key travels as authorization on either listener.
            if key.lowercased() == "authorization" {
                guard text.lowercased().hasPrefix("bearer "), text.count > 7 else {
                    throw value.error("authorization takes 'Bearer KEY' (the API key), got '\(text)'")
                }
                options.apiKey = String(text.dropFirst(7).drop(while: { $0 == " " }))
            } else {
                options.metadata[key] = text
            }
        },
        ProbeFlag("--timeout") { options, value throws(ArgumentError) in options.timeoutSeconds = try value.duration()
        },
        ProbeFlag("--max-time") { options, value throws(ArgumentError) in
            let seconds = try value.duration()
            guard seconds >= 0.001 else { throw value.error("must be at least 1ms") }
            options.maxTimeSeconds = seconds
        },
        ProbeFlag("--connect-timeout") { options, value throws(ArgumentError) in
            options.connectTimeoutSeconds = try value.duration()
            guard options.connectTimeoutSeconds >= 0.001 else { throw value.error("must be at least 1ms") }
        },
        ProbeFlag("--max-msg-bytes", "--max-msg-sz") { options, value throws(ArgumentError) in
            options.maxMessageBytes = try value.integer(in: 1024...(1 << 30))
        },
        ProbeFlag("--protoset") { options, value in options.protosets.append(value.text) },
        ProbeFlag("--proto") { options, value in options.protoFiles.append(value.text) },
        ProbeFlag("--import-path") { options, value in options.importPaths.append(value.text) },
        ProbeFlag("-v", "--verbose") { options, on in options.verbose = on },
        ProbeFlag("--grpc") { options, on in options.grpc = on },
        ProbeFlag("--no-cache") { options, on in options.noCache = on },
        ProbeFlag("--plaintext") { options, on in options.plaintext = on },
        // Every TLS flag asks for TLS: a CA file given for a plaintext connection is surely a slip.
        ProbeFlag("--tls") { options, on in options.tls = on ? options.tls ?? TLSClientConfiguration() : nil },
        ProbeFlag("--cacert") { options, value in options.tlsConfiguration.caFile = value.text },
        ProbeFlag("--cert") { options, value in options.tlsConfiguration.certificateChainFile = value.text },
        ProbeFlag("--key") { options, value in options.tlsConfiguration.privateKeyFile = value.text },
        ProbeFlag("--servername") { options, value in options.tlsConfiguration.serverName = value.text },
        ProbeFlag("--tls-insecure-skip-verify") { options, on in
            if on { options.tlsConfiguration.verifiesPeer = false }
        },
    ]

    /// The TLS configuration, made (TLS asked for) when a TLS flag first touches it.
    private var tlsConfiguration: TLSClientConfiguration {
        get { tls ?? TLSClientConfiguration() }
        set { tls = newValue }
    }

    /// `-H`'s value: `key=value`, or grpcurl's `key: value` (the value's leading spaces dropped);
    /// whichever of `=` and `:` comes first separates them, so either may appear in the value.
    static func header(_ value: ArgumentValue) throws(ArgumentError) -> (key: String, value: String) {
        let text = value.text
        guard let separator = text.firstIndex(where: { $0 == "=" || $0 == ":" }), separator != text.startIndex,
            !text[..<separator].contains(" ")
        else {
            throw value.error("expected key=value or 'key: value', got '\(text)'")
        }
        var rest = text[text.index(after: separator)...]
        if text[separator] == ":" { rest = rest.drop(while: { $0 == " " }) }
        return (String(text[..<separator]), String(rest))
    }

    /// Checks what no single flag can: flags that contradict each other.
    func validate() throws(ProbeError) {
        if plaintext && tls != nil {
            throw .usage(
                "-plaintext contradicts the TLS flags (--tls, --cacert, --cert, --key, --servername): "
                    + "rpc-probe speaks plaintext unless one of them is given; drop one side")
        }
        if !importPaths.isEmpty && protoFiles.isEmpty {
            throw .usage("-import-path needs -proto FILE: the .proto files to read from those directories")
        }
    }

    /// What remains of `--max-time`, in milliseconds (at least 1); nil without `--max-time`.
    func remainingMs() -> Int? {
        guard let maxTimeSeconds else { return nil }
        let elapsed = Double(monotonicNow() - started) / 1e9
        return max(1, Int(((maxTimeSeconds - elapsed) * 1000).rounded(.down)))
    }

    /// True once `--max-time` has passed.
    var maxTimePassed: Bool {
        guard let maxTimeSeconds else { return false }
        return Double(monotonicNow() - started) / 1e9 >= maxTimeSeconds
    }

    /// `error` as DEADLINE_EXCEEDED when `--max-time` has passed (a connect cut short by it
    /// fails as the deadline it is, as grpcurl's does), else unchanged.
    func maxTimeExceeded(_ error: ProbeError, connecting: Bool) -> ProbeError {
        guard maxTimePassed, case .call(let failure) = error, failure.code == .unavailable else { return error }
        return .call(
            RPCError(
                .deadlineExceeded,
                "--max-time \(BenchReport.fixed(maxTimeSeconds ?? 0, 3)) s passed"
                    + (connecting ? " while connecting" : "") + " (\(failure.message))"))
    }

    /// The connect timeout, cut to what remains of `--max-time`.
    func connectTimeoutMs() -> Int {
        let connect = max(1, Int(connectTimeoutSeconds * 1000))
        return min(connect, remainingMs() ?? connect)
    }

    /// Client options for the server address.
    func clientOptions() throws(ProbeError) -> ClientOptions {
        guard let address else {
            throw .usage("missing HOST:PORT (only list and describe with --protoset or -proto work without a server)")
        }
        let server: HostPort
        do throws(ArgumentError) {
            server = try ArgumentValue(address, name: nil).hostPort(ports: 1...UInt16.max, defaultHost: "127.0.0.1")
        } catch {
            throw .usage(error.message)
        }
        var options = ClientOptions(host: server.host, port: server.port, apiKey: apiKey)
        options.clientName = "rpc-probe"
        options.connectTimeoutMs = connectTimeoutMs()
        options.maxMessageBytes = maxMessageBytes
        if let tls, (tls.certificateChainFile == nil) != (tls.privateKeyFile == nil) {
            throw .usage(tls.certificateChainFile == nil ? "--key needs --cert" : "--cert needs --key")
        }
        options.tls = tls
        return options
    }

    /// The server's host and port for the gRPC client, and its TLS (offering ALPN `h2`), if any.
    func grpcServer() throws(ProbeError) -> (server: HostPort, tls: TLSClientConfiguration?) {
        let options = try clientOptions()
        var tls = options.tls
        tls?.applicationProtocols = [TLSContext.http2Protocol]
        return (HostPort(host: options.host, port: options.port), tls)
    }

    /// The gRPC request metadata from the shared flags: the key as `authorization: Bearer`, `--as`
    /// as `x-on-behalf-of`, `-H` as custom fields.
    func grpcMetadata() -> GRPCProbeClient.Metadata {
        GRPCProbeClient.Metadata(apiKey: apiKey, onBehalfOf: onBehalfOf, custom: metadata)
    }

    /// Call options from the shared flags: `--timeout`, cut to what remains of `--max-time`.
    func callOptions() -> CallOptions {
        var timeoutMs = min(timeoutSeconds * 1000, Double(UInt32.max))
        if let remaining = remainingMs() {
            timeoutMs = timeoutMs > 0 ? min(timeoutMs, Double(remaining)) : Double(remaining)
        }
        return CallOptions(timeoutMs: UInt32(timeoutMs), onBehalfOf: onBehalfOf, metadata: metadata)
    }

    static let help = """
        shared flags (anywhere: before the address, after the verb; -name works as --name):
          --api-key KEY          API key, bare or APP_ID:KEY (default: $MODERATION_CLIENT_API_KEY)
          --as UID               act on behalf of this user (CallHeader.on_behalf_of; default: the app)
          -H key=value, -H 'key: value'
                                 call metadata (CallHeader.metadata; repeatable);
                                 -H 'authorization: Bearer KEY' gives the API key
          --timeout D            deadline of each call, e.g. 2s, 500ms (default: none)
          --max-time D           the whole command's limit, connecting included (grpcurl's
                                 -max-time; a bare number is seconds)
          --connect-timeout D    connect and handshake timeout (default: 5s)
          --max-msg-bytes N      largest response message accepted, in bytes (default: 4194304;
                                 also -max-msg-sz)
          --protoset FILE        a FileDescriptorSet to use instead of the server's reflection
                                 (repeatable; with it, list and describe need no HOST:PORT)
          -proto FILE            a .proto file to use instead of reflection, compiled with protoc
                                 (repeatable; its imports are found in the -import-path DIRs)
          -import-path DIR       where -proto's files and their imports are (repeatable)
          --no-cache             fetch the schema by reflection every time; by default it is kept
                                 in ${XDG_CACHE_HOME:-$HOME/.cache}/rpc-probe/ and used again
                                 while the server's HELLO_ACK names the same schema digest
          -v                     verbose: server, sizes and timings on standard error
          -plaintext             no TLS (rpc-probe's default; accepted for grpcurl's habit)
          --grpc                 speak standard gRPC (HTTP/2: h2c, or h2 with the TLS flags) to
                                 moderation-server (any of its ports) or any gRPC server with
                                 reflection; list/describe use gRPC reflection, health
                                 grpc.health.v1, bench HTTP/2 streams (plaintext only)

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
