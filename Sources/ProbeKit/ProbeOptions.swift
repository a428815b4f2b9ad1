import CommandLineSupport
import RPCPosix

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
        return options
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
        """
}
