internal import RPCPosix

/// Runs the built `rpc-probe` as a child process, with an environment of its own: this process's
/// without any `RPC_PROBE_*` variable (a developer's key must not leak into a test), plus
/// `RPC_PROBE_API_KEY` when a key is given.
public struct ProbeRunner: Sendable {
    /// The address put before every command line, or nil for commands that need none.
    public let address: String?
    /// The API key passed in `RPC_PROBE_API_KEY`, or nil for none.
    public let apiKey: String?

    public init(address: String?, apiKey: String?) {
        self.address = address
        self.apiKey = apiKey
    }

    /// A runner for `server` with its key.
    public init(_ server: ModerationServerProcess) {
        self.init(address: server.address, apiKey: ModerationServerProcess.apiKey)
    }

    /// `rpc-probe [ADDRESS] arguments…` run to its end.
    public func run(_ arguments: [String], standardInput: [UInt8]? = nil, timeoutMs: Int = 30_000) throws
        -> ChildProcess.Outcome
    {
        try start(arguments, standardInput: standardInput).finish(timeoutMs: timeoutMs)
    }

    /// `rpc-probe [ADDRESS] arguments…` run to its end.
    public func run(_ arguments: String..., standardInput: [UInt8]? = nil, timeoutMs: Int = 30_000) throws
        -> ChildProcess.Outcome
    {
        try run(arguments, standardInput: standardInput, timeoutMs: timeoutMs)
    }

    /// `rpc-probe [ADDRESS] arguments…` started, for commands that run on (`watch`).
    public func start(_ arguments: [String], standardInput: [UInt8]? = nil) throws -> ChildProcess {
        var environment = ProcessEnvironment.current().filter { !$0.key.hasPrefix("RPC_PROBE_") }
        if let apiKey { environment["RPC_PROBE_API_KEY"] = apiKey }
        return try ChildProcess(
            executable: try BuiltProducts.path(of: "rpc-probe"), arguments: (address.map { [$0] } ?? []) + arguments,
            environment: environment, standardInput: standardInput)
    }
}
