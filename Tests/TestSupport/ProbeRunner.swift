internal import RPCPosix

/// Runs the built `rpc-probe` as a child process, with an environment of its own: this process's
/// without any variable that gives a key (a developer's key must not leak into a test), plus
/// `MODERATION_CLIENT_API_KEY` when a key is given, and `XDG_CACHE_HOME` in a temporary directory.
public struct ProbeRunner: Sendable {
    /// The address put before every command line, or nil for commands that need none.
    public let address: String?
    /// The API key passed in `MODERATION_CLIENT_API_KEY`, or nil for none.
    public let apiKey: String?

    public init(address: String?, apiKey: String?) {
        self.address = address
        self.apiKey = apiKey
    }

    /// A runner for `server` with its key.
    public init(_ server: ModerationServerProcess) {
        self.init(address: server.address, apiKey: ModerationServerProcess.apiKey)
    }

    /// A runner for `server`'s gRPC listener with its key: every command line starts with
    /// `--grpc 127.0.0.1:PORT`.
    public static func grpc(_ server: ModerationServerProcess) throws -> ProbeRunner {
        guard let address = server.grpcAddress else { throw TestFailure("the server has no gRPC listener") }
        return ProbeRunner(address: address, apiKey: ModerationServerProcess.apiKey, leading: ["--grpc"])
    }

    /// Arguments put before the address (`--grpc`).
    public var leading: [String] = []
    /// Variables set in the child's environment over this process's (`PATH` without protoc).
    public var environment: [String: String] = [:]

    public init(address: String?, apiKey: String?, leading: [String]) {
        self.init(address: address, apiKey: apiKey)
        self.leading = leading
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

    /// Where rpc-probe keeps descriptor sets (`XDG_CACHE_HOME`) unless a test sets its own: one
    /// directory for this test process, so tests never write into the developer's home.
    public static let cacheHome = TemporaryDirectory(prefix: "rpc-probe-cache")

    /// `rpc-probe [ADDRESS] arguments…` started, for commands that run on (`watch`).
    public func start(_ arguments: [String], standardInput: [UInt8]? = nil) throws -> ChildProcess {
        let keyVariables: Set = ["MODERATION_CLIENT_API_KEY", "MRPC_API_KEY"]
        var environment = ProcessEnvironment.current().filter {
            !$0.key.hasPrefix("RPC_PROBE_") && !keyVariables.contains($0.key)
        }
        environment["XDG_CACHE_HOME"] = Self.cacheHome.path
        if let apiKey { environment["MODERATION_CLIENT_API_KEY"] = apiKey }
        environment.merge(self.environment) { _, override in override }
        return try ChildProcess(
            executable: try BuiltProducts.path(of: "rpc-probe"),
            arguments: leading + (address.map { [$0] } ?? []) + arguments,
            environment: environment, standardInput: standardInput)
    }
}
