/// The sizes of a CALL's parts as encoded, which HELLO_ACK's limits apply to.
public struct CallSizes: Equatable, Sendable {
    /// The encoded CallHeader.
    public var headerBytes: Int
    /// The request body before any deflating (the server's limit applies after inflating).
    public var bodyBytes: Int

    public init(headerBytes: Int, bodyBytes: Int) {
        self.headerBytes = headerBytes
        self.bodyBytes = bodyBytes
    }
}
