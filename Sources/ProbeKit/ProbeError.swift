public import RPCCore

/// Why rpc-probe stops, and with which exit code (grpcurl's conventions).
public enum ProbeError: Error {
    /// Bad command line: exit 2, with the usage hint.
    case usage(String)
    /// A call failed with a status (connecting and the handshake included): exit 64 + the status code.
    case call(RPCError)
    /// Anything else (a file that cannot be read, bad JSON, a schema without the symbol): exit 1.
    case failure(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: 2
        case .call(let error): Self.exitCode(for: error)
        case .failure: 1
        }
    }

    /// What is printed on standard error.
    public var message: String {
        switch self {
        case .usage(let text): "rpc-probe: " + text
        case .call(let error): Envelope.text(error)
        case .failure(let text): "rpc-probe: " + text
        }
    }

    /// 64 + the status code, as grpcurl exits after a failed call (255 for codes past 191).
    static func exitCode(for error: RPCError) -> Int32 {
        Int32(min(64 + UInt64(error.code.rawValue), 255))
    }
}
