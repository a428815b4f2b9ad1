public import RPCCore

/// Why rpc-probe stops, and with which exit code (grpcurl's conventions).
public enum ProbeError: Error {
    /// Bad command line: exit 2, with the usage hint.
    case usage(String)
    /// A call failed with a status: exit 64 + the status code.
    case call(RPCError)
    /// Anything else (a file that cannot be read, a schema without the symbol): exit 1.
    case failure(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: 2
        case .call(let error): 64 + Int32(error.code.rawValue)
        case .failure: 1
        }
    }

    public var message: String {
        switch self {
        case .usage(let text): text
        case .call(let error): "ERROR: \(error)"
        case .failure(let text): text
        }
    }
}
