internal import CNGHTTP2

/// What nghttp2's callbacks read and write: the events of the current `receive`, the header
/// block and DATA frame being received, and each stream's output queue.
///
/// A class of its own, the `user_data` of the nghttp2 session, so that it outlives the nghttp2
/// session: `HTTP2ServerSession.deinit` deletes the nghttp2 session while this is still alive.
///
/// The properties touched for every frame are `@exclusivity(unchecked)`: they are read and
/// written on the connection's thread only, by the session's methods and nghttp2's callbacks,
/// none of which starts an access while another is under way; the runtime's check (some 80
/// instructions an access, a few dozen accesses a call) would guard against nothing.
final class SessionState {
    let maxHeaderListSize: Int

    /// Events of the `receive` or `takeOutput` under way, in order (none are made for what a
    /// delegate is told).
    @exclusivity(unchecked) var events: [HTTP2Event] = []
    /// A server session's delegate, told of requests as nghttp2 reads them; nil: events.
    @exclusivity(unchecked) unowned(unsafe) var delegate: (any HTTP2ServerSessionDelegate)?

    /// The header block being received (HEADERS and its CONTINUATIONs arrive as one run): its
    /// names and values back to back (`blockByteCount` of `blockCapacity` bytes), and one entry
    /// per field (`entryCount` of `entryCapacity`); both grown by doubling and kept from block to
    /// block (plain buffers: an array's uniqueness check and bounds costs showed on every field).
    @exclusivity(unchecked) private var blockBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 1024)
    @exclusivity(unchecked) private var blockCapacity = 1024
    @exclusivity(unchecked) private var blockByteCount = 0
    @exclusivity(unchecked) private var entries = UnsafeMutablePointer<HTTP2HeaderFields.Entry>.allocate(capacity: 16)
    @exclusivity(unchecked) private var entryCapacity = 16
    @exclusivity(unchecked) private var entryCount = 0
    /// Its size as RFC 9113 counts it (name + value + 32 per field).
    @exclusivity(unchecked) var headerBlockSize = 0
    /// The DATA frame being received: its stream and the payload so far.
    @exclusivity(unchecked) var dataStreamID: Int32 = 0
    @exclusivity(unchecked) var dataPayload: [UInt8] = []

    /// A client's streams with output (request body queued): nghttp2 makes a client stream
    /// only when its HEADERS go out, so the record is kept here, by id.
    @exclusivity(unchecked) var streams: [Int32: OutboundStream] = [:]
    /// A server's streams with output, found through nghttp2's stream user data (no hashing of
    /// our own) and held here, linked, until nghttp2 closes them or the session ends.
    @exclusivity(unchecked) var linkedStreams: OutboundStream?
    /// Bytes queued in all streams and not yet handed to nghttp2.
    @exclusivity(unchecked) var queuedBytes = 0

    /// The first bytes the peer sent (up to 64), to say what a bad preface was.
    var firstBytes: [UInt8] = []
    /// Why the connection failed, once it has.
    var connectionError: String?
    /// Set when nghttp2 failed fatally: the nghttp2 session may then only be deleted.
    var isFatal = false
    /// True once any output went out (the server's connection preface, SETTINGS, comes first).
    var sentOutput = false
    /// The connection's last bytes after a fatal error nghttp2 does not answer itself (a flood):
    /// written by hand, since the nghttp2 session may only be deleted then.
    var finalBytes: [UInt8] = []
    /// GOAWAY frames submitted by the caller and not yet sent: any other GOAWAY nghttp2 sends
    /// is its own, ending the connection after an error it found.
    var goawaysSubmitted = 0

    /// Bytes nghttp2 holds for the session (`CountingAllocator`); outlives the nghttp2 session,
    /// as this state does.
    let allocatedBytes = UnsafeMutablePointer<Int>.allocate(capacity: 1)

    init(maxHeaderListSize: Int) {
        self.maxHeaderListSize = maxHeaderListSize
        allocatedBytes.initialize(to: 0)
    }

    deinit {
        blockBytes.deallocate()
        entries.deallocate()
        allocatedBytes.deallocate()
        // Unlinked one by one: a long chain released from its head would recurse in deinit.
        while let stream = linkedStreams {
            linkedStreams = stream.next
            stream.next = nil
        }
    }

    /// Links a server stream's output side (held here until `unlink`).
    func link(_ stream: OutboundStream) {
        stream.next = linkedStreams
        linkedStreams?.previous = stream
        linkedStreams = stream
    }

    /// Lets go of a server stream's output side.
    func unlink(_ stream: OutboundStream) {
        queuedBytes -= stream.queue.count
        if let previous = stream.previous {
            previous.next = stream.next
        } else {
            linkedStreams = stream.next
        }
        stream.next?.previous = stream.previous
        stream.next = nil
        stream.previous = nil
    }

    static func from(_ userData: UnsafeMutableRawPointer?) -> SessionState {
        Unmanaged<SessionState>.fromOpaque(userData!).takeUnretainedValue()
    }

    /// Calls `body` with the state a callback's `userData` points to, with no reference counted
    /// for the call: the session holds the state for as long as nghttp2 may call back.
    @inline(__always)
    static func with<R>(_ userData: UnsafeMutableRawPointer?, _ body: (SessionState) -> R) -> R {
        Unmanaged<SessionState>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    /// Records the connection's failure (the first reason stays); `receive` reports it as an event.
    func fail(_ reason: String, fatal: Bool) {
        if fatal { isFatal = true }
        if connectionError == nil { connectionError = reason }
    }

    // MARK: The data provider

    /// nghttp2 asks for up to `capacity` bytes of stream `streamID`'s DATA: copy them from the
    /// queue; when the queue is empty, either end the stream (trailers, or END_STREAM on the last
    /// DATA frame when the trailers are empty) or defer until more is queued.
    func readData(
        session: OpaquePointer, streamID: Int32, stream: OutboundStream, into buffer: UnsafeMutablePointer<UInt8>,
        capacity: Int, flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        let n = stream.queue.read(into: buffer, capacity: capacity)
        queuedBytes -= n
        guard stream.queue.isEmpty else { return n }
        if let trailers = stream.trailers {
            stream.trailers = nil
            if trailers.isEmpty {
                flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            } else {
                flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue | NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
                let status = trailers.withNameValues { nghttp2_submit_trailer(session, streamID, $0, $1) }
                if status != 0 { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
            }
            return n
        }
        if n == 0 {
            stream.isDeferred = true
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        return n
    }

    // MARK: Receiving

    func beginHeaders() {
        blockByteCount = 0
        entryCount = 0
        headerBlockSize = 0
    }

    /// One field of the block; false when the block has grown past the limit (the stream is
    /// then reset and its block dropped).
    func header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Bool {
        headerBlockSize += name.count + value.count + 32
        guard headerBlockSize <= maxHeaderListSize else {
            blockByteCount = 0
            entryCount = 0
            return false
        }
        let needed = blockByteCount + name.count + value.count
        if needed > blockCapacity {
            let capacity = max(needed, 2 * blockCapacity)
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            bigger.initialize(from: blockBytes, count: blockByteCount)
            blockBytes.deallocate()
            blockBytes = bigger
            blockCapacity = capacity
        }
        if let base = name.baseAddress { (blockBytes + blockByteCount).initialize(from: base, count: name.count) }
        if let base = value.baseAddress {
            (blockBytes + blockByteCount + name.count).initialize(from: base, count: value.count)
        }
        if entryCount == entryCapacity {
            let bigger = UnsafeMutablePointer<HTTP2HeaderFields.Entry>.allocate(capacity: 2 * entryCapacity)
            bigger.moveInitialize(from: entries, count: entryCount)
            entries.deallocate()
            entries = bigger
            entryCapacity *= 2
        }
        (entries + entryCount).initialize(
            to: HTTP2HeaderFields.Entry(
                nameOffset: Int32(blockByteCount), nameLength: Int32(name.count), valueLength: Int32(value.count),
                code: HTTP2CommonName(name)?.rawValue ?? HTTP2CommonName.noCode))
        entryCount += 1
        blockByteCount = needed
        return true
    }

    /// Calls `body` with the header block just completed, read in place (valid during the
    /// call), then empties it for the next (the buffers stay).
    func withHeaderFields<R>(_ body: (HTTP2HeaderFields) -> R) -> R {
        defer {
            blockByteCount = 0
            entryCount = 0
        }
        return body(
            HTTP2HeaderFields(bytes: UnsafePointer(blockBytes), entries: UnsafePointer(entries), count: entryCount))
    }

    /// The header block just completed, made into one `HTTP2HeaderBlock` (the buffers stay for the next).
    func takeHeaderBlock() -> HTTP2HeaderBlock {
        withHeaderFields { $0.block() }
    }

    func dataChunk(streamID: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        if streamID != dataStreamID {
            dataStreamID = streamID
            dataPayload.removeAll()
        }
        dataPayload.append(contentsOf: bytes)
    }

    /// The payload of stream `streamID`'s DATA frame, just completed.
    func takeData(streamID: Int32) -> [UInt8] {
        guard streamID == dataStreamID else { return [] }
        dataStreamID = 0
        defer { dataPayload = [] }
        return dataPayload
    }

    /// nghttp2 closed the stream: its output side goes; a client is told of every close, a
    /// server's delegate of those that were not a clean end of both sides.
    func streamClosed(_ streamID: Int32, errorCode: UInt32, linked: OutboundStream?) {
        if let linked {
            unlink(linked)
        } else if let stream = streams.removeValue(forKey: streamID) {
            queuedBytes -= stream.queue.count
        }
        if streamID == dataStreamID {
            dataStreamID = 0
            dataPayload = []
        }
        if let delegate {
            if errorCode != 0 {
                delegate.streamClosed(streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode))
            }
        } else {
            events.append(.streamClosed(streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode)))
        }
    }
}

/// One stream's response side: what is queued for its DATA frames and what ends it. Confined to
/// the connection's thread like `SessionState`, and unchecked for exclusivity as it is.
final class OutboundStream {
    /// The server's links (`SessionState.linkedStreams`).
    @exclusivity(unchecked) var next: OutboundStream?
    @exclusivity(unchecked) unowned(unsafe) var previous: OutboundStream?
    @exclusivity(unchecked) var queue = ByteQueue()
    /// Response headers submitted (once only).
    @exclusivity(unchecked) var headersSubmitted = false
    /// Trailers submitted or the response ended: no more data may be queued.
    @exclusivity(unchecked) var isEnded = false
    /// Trailers to send once the queue is empty (empty: END_STREAM on the last DATA frame).
    @exclusivity(unchecked) var trailers: HTTP2HeaderBlock?
    /// The data provider told nghttp2 to wait (`NGHTTP2_ERR_DEFERRED`): new data must resume it.
    @exclusivity(unchecked) var isDeferred = false
}
