/// Where a call's outbound frames go: its connection, on that connection's event loop.
///
/// Responders and stream writers may complete from any thread; the port takes the encoded frame
/// to the loop (directly when already on it, through the loop's inbox otherwise) and counts bytes
/// waiting to be written so stream writers can see a reader that does not keep up. A class: a
/// fan-out reaches thousands of ports per event, and a class existential is called through
/// directly, with no box to project or copy.
public protocol CallPort: AnyObject, Sendable {
    /// Hands an encoded frame of `streamID` to the connection. `final` ends the call.
    func deliver(streamID: UInt32, frame: [UInt8], final: Bool)
    /// Hands one uncompressed message of a server stream to the connection: its encoding only,
    /// shared by the many streams of a fan-out (see `OutgoingFrame.message`).
    func deliverMessage(streamID: UInt32, body: [UInt8])
    /// Bytes handed over but not yet written to the socket.
    var pendingBytes: Int { get }
    /// When called on the connection's own loop while the call is live, lets `write` append the
    /// frame straight into the connection's output (no intermediate buffer) and returns true;
    /// otherwise returns false without calling `write`.
    func writeOnLoop(streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void) -> Bool
    /// Tells the connection, on its loop, that the large request its session handed to the
    /// large-request pool has been taken in (inflated, decoded, its handler started, or refused),
    /// so that it consumes frames again (`ServerSession.largeRequestTakenIn`).
    func largeRequestTakenIn()
    /// A hint that a message comes soon: asks for the storage the port queues frames in to be
    /// brought into cache (the fan-out asks a place ahead, once the port itself had time to
    /// arrive). Changes nothing else; the default does nothing.
    func prefetchQueue()
}

extension CallPort {
    public func prefetchQueue() {}

    /// A port with no cheaper way takes the message as a whole frame.
    public func deliverMessage(streamID: UInt32, body: [UInt8]) {
        let (frame, _) = OutgoingFrame.message(streamID: streamID, body: body).encoded
        deliver(streamID: streamID, frame: frame, final: false)
    }
}
