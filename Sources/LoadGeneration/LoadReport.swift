/// What a load run measured.
public struct LoadReport: Sendable {
    public var calls: UInt64 = 0
    /// Every call sent, warm-up included: request numbers 0 … `sentCalls` − 1, so a run with
    /// fewer distinct bodies than this sent some of them more than once.
    public var sentCalls: UInt64 = 0
    public var durationSeconds = 0.0
    public var latency = LatencyHistogram()
    /// Calls by outcome: "OK", or the status name and error code ("NOT_FOUND ERR_GROUP_NOT_FOUND").
    public var outcomes: [String: UInt64] = [:]
    /// Connection-level failures (connect, handshake, closed by the server).
    public var connectionErrors: [String] = []
    /// CPU time the client process spent per measured call, in nanoseconds.
    public var clientCPUNanosecondsPerCall = 0.0

    public var callsPerSecond: Double { durationSeconds > 0 ? Double(calls) / durationSeconds : 0 }
}
