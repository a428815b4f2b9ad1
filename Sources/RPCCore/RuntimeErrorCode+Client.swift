/// The runtime's codes sent outside RPCCore: by a service's stream sink and by the client itself.
extension RuntimeErrorCode {
    /// RESOURCE_EXHAUSTED: a stream's reader did not keep up; details carry `last_seq` to resume from.
    public static let slowConsumer = "ERR_SLOW_CONSUMER"
    /// RESOURCE_EXHAUSTED, the client's own: a call refused before it was sent because too much
    /// output already waits for a server that is not reading. Never on the wire (not an
    /// `mrpc.v1.ErrorCode` value).
    public static let resourceExhausted = "ERR_RESOURCE_EXHAUSTED"
}
