/// Where a call's response parts go: its connection, on that connection's event loop.
///
/// Responders and stream writers may complete from any thread; the port takes each part to the
/// loop (directly when already on it, through the loop's inbox otherwise) and counts bytes
/// waiting to be written so stream writers can see a reader that does not keep up. A class: a
/// fan-out reaches thousands of ports per event, and a class existential is called through
/// directly, with no box to project or copy.
public protocol CallPort: AnyObject, Sendable {
    /// Hands a part of `streamID`'s response to the connection (a final part ends the call).
    func send(streamID: UInt32, _ part: ResponsePart)
    /// Hands one uncompressed message of a server stream to the connection: its encoding,
    /// shared by the many streams of a fan-out.
    func sendMessage(streamID: UInt32, body: [UInt8])
    /// Bytes handed over but not yet written to the socket.
    var pendingBytes: Int { get }
    /// When called on the connection's own loop while the call is live, lets `write` append a
    /// unary call's answer straight into the wire's output (no intermediate buffer), ends the call
    /// OK and returns true; otherwise returns false without calling `write`.
    func replyOnLoop(streamID: UInt32, _ write: MessageWriter) -> Bool
    /// Tells the connection, on its loop, that the large request its core handed to the
    /// large-request pool has been taken in (inflated, decoded, its handler started, or refused),
    /// so that it reads requests again (`ConnectionCore.largeRequestTakenIn`).
    func largeRequestTakenIn()
    /// A hint that a message comes soon: asks for the storage the port queues parts in to be
    /// brought into cache (the fan-out asks a place ahead, once the port itself had time to
    /// arrive). Changes nothing else; the default does nothing.
    func prefetchQueue()
}

extension CallPort {
    public func prefetchQueue() {}

    /// A port with no cheaper way takes the message as any other part.
    public func sendMessage(streamID: UInt32, body: [UInt8]) {
        send(streamID: streamID, .message(ResponseMessage(bytes: body)))
    }
}
