/// A server stream started on a `ClientConnection`.
public final class ClientStream: Sendable {
    public let streamID: UInt32
    private weak let connection: ClientConnection?

    init(connection: ClientConnection, streamID: UInt32) {
        self.connection = connection
        self.streamID = streamID
    }

    /// Cancels the stream: CANCEL is sent and `onEnd` gets CANCELLED.
    public func cancel() {
        connection?.cancel(streamID: streamID)
    }
}
