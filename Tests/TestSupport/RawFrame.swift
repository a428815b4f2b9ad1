public import ProtoBridge
public import RPCCore
public import RPCMessages

/// A failure of a test helper, with a message that says what was expected and what happened.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// One frame as it travelled on the wire: the header, the reserved field and the payload.
///
/// Decoding helpers throw `TestFailure` (or the bridge's decoding error) when the payload is not
/// what the frame type promises, so a test sees exactly which rule the peer broke.
public struct RawFrame: Equatable, Sendable, CustomStringConvertible {
    public let header: FrameHeader
    public let reserved: UInt16
    public let payload: [UInt8]

    public init(header: FrameHeader, reserved: UInt16 = 0, payload: [UInt8]) {
        self.header = header
        self.reserved = reserved
        self.payload = payload
    }

    public var type: FrameType { header.type }
    public var streamID: UInt32 { header.streamID }

    public var description: String {
        "\(header.type) stream=\(header.streamID) flags=\(header.flags) length=\(payload.count)"
    }

    /// The HELLO_ACK this frame carries.
    public func helloAck() throws -> HelloAck {
        try expectType(.helloAck)
        return try HelloAck(serializedBytes: payload)
    }

    /// The GOAWAY this frame carries.
    public func goaway() throws -> Goaway {
        try expectType(.goaway)
        return try Goaway(serializedBytes: payload)
    }

    /// The status of a REPLY (an empty status prefix is OK) and its body, as sent (not inflated).
    public func reply() throws -> (status: Status, body: [UInt8]) {
        try expectType(.reply)
        guard payload.count >= 4 else { throw TestFailure("REPLY of \(payload.count) bytes has no status length") }
        let length = payload.withUnsafeBytes { Int(BigEndian.readUInt32($0)) }
        guard length <= payload.count - 4 else {
            throw TestFailure("REPLY status length \(length) runs past the frame")
        }
        let status = try Status(serializedBytes: payload[4..<4 + length])
        return (status, Array(payload[(4 + length)...]))
    }

    /// The status of a REPLY, as an error (nil for OK).
    public func replyError() throws -> RPCError? {
        let status = try reply().status
        return status.code == 0 ? nil : RPCError(status: status)
    }

    /// The status ending a stream (TRAILERS).
    public func trailers() throws -> Status {
        try expectType(.trailers)
        return try Status(serializedBytes: payload)
    }

    private func expectType(_ type: FrameType) throws {
        guard header.type == type else { throw TestFailure("expected \(type), got \(self)") }
    }
}

/// Splits a byte stream into frames, keeping an incomplete tail for the next bytes.
public struct FrameParser: Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// Bytes received but not yet part of a complete frame.
    public var bufferedCount: Int { buffer.count }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// Removes and returns the first `count` raw bytes (which must be buffered): a preface.
    public mutating func take(_ count: Int) -> [UInt8] {
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    /// The next complete frame, if the buffer holds one.
    public mutating func next() -> RawFrame? {
        guard buffer.count >= FrameHeader.size else { return nil }
        let (header, reserved) = buffer.withUnsafeBytes { FrameHeader.read(from: $0) }
        let total = FrameHeader.size + Int(header.length)
        guard buffer.count >= total else { return nil }
        let frame = RawFrame(header: header, reserved: reserved, payload: Array(buffer[FrameHeader.size..<total]))
        buffer.removeFirst(total)
        return frame
    }

    /// Every complete frame in the buffer.
    public mutating func all() -> [RawFrame] {
        var frames: [RawFrame] = []
        while let frame = next() { frames.append(frame) }
        return frames
    }

    /// The frames of `bytes`, which must hold nothing but complete frames.
    public static func frames(in bytes: [UInt8]) throws -> [RawFrame] {
        var parser = FrameParser()
        parser.append(bytes)
        let frames = parser.all()
        guard parser.bufferedCount == 0 else {
            throw TestFailure("\(parser.bufferedCount) bytes after the last whole frame")
        }
        return frames
    }
}

/// Builds frames byte by byte, valid or not, as a client (or a fake server) would send them.
public enum Frames {
    /// The API key `TestKeys` accepts, and the app it belongs to.
    public static let apiKey = "test-key-123"
    public static let appID = "app1"

    /// Any frame: every header field is the caller's, including ones the protocol forbids.
    public static func raw(
        type: UInt8, flags: UInt8 = 0, reserved: UInt16 = 0, streamID: UInt32 = 0, payload: [UInt8] = [],
        length: UInt32? = nil
    ) -> [UInt8] {
        var out: [UInt8] = []
        BigEndian.append(length ?? UInt32(payload.count), to: &out)
        out.append(type)
        out.append(flags)
        out.append(UInt8(reserved >> 8))
        out.append(UInt8(truncatingIfNeeded: reserved))
        BigEndian.append(streamID, to: &out)
        return out + payload
    }

    /// A frame of a known type.
    public static func frame(_ type: FrameType, flags: UInt8 = 0, streamID: UInt32 = 0, payload: [UInt8] = [])
        -> [UInt8]
    {
        raw(type: type.rawValue, flags: flags, streamID: streamID, payload: payload)
    }

    /// HELLO on stream 0.
    public static func hello(apiKey: String = apiKey, appID: String = "", acceptDeflate: Bool = false) -> [UInt8] {
        let hello = Hello(
            apiKey: apiKey, clientName: "raw-test-client",
            acceptEncodings: acceptDeflate ? ["deflate"] : [], appID: appID)
        return frame(.hello, payload: hello.serializedBytes())
    }

    /// The preface followed by HELLO: what a client sends first.
    public static func opening(apiKey: String = apiKey, acceptDeflate: Bool = false) -> [UInt8] {
        Preface.bytes + hello(apiKey: apiKey, acceptDeflate: acceptDeflate)
    }

    /// A CALL whose header and body are given as bytes (either may be garbage).
    public static func call(streamID: UInt32, headerBytes: [UInt8], body: [UInt8], compressed: Bool = false) -> [UInt8]
    {
        var payload: [UInt8] = []
        BigEndian.append(UInt32(headerBytes.count), to: &payload)
        payload += headerBytes
        payload += body
        return frame(.call, flags: compressed ? FrameHeader.compressedFlag : 0, streamID: streamID, payload: payload)
    }

    /// A CALL of `method` with an encoded body.
    public static func call(
        streamID: UInt32, method: String, body: [UInt8] = [], timeoutMs: UInt32 = 0, acceptDeflate: Bool = false,
        compressed: Bool = false
    ) -> [UInt8] {
        let header = CallHeader(method: method, timeoutMs: timeoutMs, acceptEncodings: acceptDeflate ? ["deflate"] : [])
        return call(streamID: streamID, headerBytes: header.serializedBytes(), body: body, compressed: compressed)
    }

    /// A CALL of a typed method.
    public static func call<Request, Response>(
        streamID: UInt32, _ method: ProtoMethod<Request, Response>, _ request: Request, timeoutMs: UInt32 = 0,
        acceptDeflate: Bool = false
    ) -> [UInt8] {
        call(
            streamID: streamID, method: method.path, body: request.serializedBytes(), timeoutMs: timeoutMs,
            acceptDeflate: acceptDeflate)
    }

    /// A CALL of Echo.
    public static func echo(streamID: UInt32, _ payload: [UInt8], timeoutMs: UInt32 = 0) -> [UInt8] {
        call(streamID: streamID, DiagnosticsMethods.echo, EchoRequest(payload: payload), timeoutMs: timeoutMs)
    }

    /// CANCEL of a call.
    public static func cancel(streamID: UInt32) -> [UInt8] {
        frame(.cancel, streamID: streamID)
    }

    /// PING with 8 opaque bytes.
    public static func ping(_ payload: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8], streamID: UInt32 = 0) -> [UInt8] {
        frame(.ping, streamID: streamID, payload: payload)
    }

    /// A protobuf encoding that no message type accepts: a length-delimited field 1 that claims
    /// 16 bytes and carries one.
    public static let garbageProtobuf: [UInt8] = [0x0A, 0x10, 0x41]
}
