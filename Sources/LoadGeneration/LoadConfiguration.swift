public import RPCPosix

/// What a load run does: which call, how many connections and calls in flight, for how long.
public struct LoadConfiguration: Sendable {
    /// The protocol the load speaks.
    public enum Transport: Sendable {
        /// The framed protocol (MRPC), plaintext or TLS.
        case framed
        /// Standard gRPC over HTTP/2 (h2c with prior knowledge, plaintext): `--depth` streams per
        /// connection.
        case grpc
    }

    public var transport = Transport.framed
    public var client = ClientOptions()
    /// Method path, e.g. "/mrpc.diagnostics.v1.Diagnostics/Echo".
    public var path = ""
    /// Encoded request bodies, used in turn: the `k`-th call sent (warm-up included, whatever its
    /// thread) sends body `k % bodies.count` (one body is the common case).
    public var bodies: [[UInt8]] = [[]]
    public var callOptions = CallOptions()
    public var connections = 1
    /// Calls in flight per connection.
    public var depth = 1
    /// Length of the measured part, in seconds (ignored when `total` is set).
    public var durationSeconds = 10.0
    /// Stop after this many measured calls instead of after a duration.
    public var total: Int?
    /// Seconds of load before measuring starts.
    public var warmupSeconds = 0.0
    /// Calls per second across all connections; nil means as fast as replies come back.
    public var rate: Double?
    /// Client threads; connections are spread over them.
    public var threads = 1

    public init() {}
}
