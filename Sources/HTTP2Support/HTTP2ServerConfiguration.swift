/// What a server session announces in its first SETTINGS frame and the limits it holds peers to.
///
/// The defaults suit an RPC server: many concurrent streams per connection, HTTP/2's default
/// window and frame size, and a 16 KiB header list (gRPC's metadata is small; a peer that sends
/// more is refused per stream rather than held in memory). The flood limits are nghttp2's own
/// defaults, spelled out so they are visible and testable.
public struct HTTP2ServerConfiguration: Sendable, Equatable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams past it are refused with REFUSED_STREAM.
    public var maxConcurrentStreams: UInt32
    /// SETTINGS_INITIAL_WINDOW_SIZE: how much each request stream may send before the server's
    /// WINDOW_UPDATE (nghttp2 sends those as the data is received).
    public var initialWindowSize: UInt32
    /// SETTINGS_MAX_FRAME_SIZE: the largest frame payload the server accepts (16 KiB to 16 MiB).
    public var maxFrameSize: UInt32
    /// SETTINGS_MAX_HEADER_LIST_SIZE: the largest header block (names, values and 32 bytes per
    /// field, as RFC 9113 counts it) the server accepts; nghttp2 only announces it, so the session
    /// enforces it by resetting a stream whose block is larger.
    public var maxHeaderListSize: UInt32
    /// Outgoing SETTINGS and PING acknowledgements that may wait unsent before the peer counts as
    /// flooding (it sends faster than it reads) and the session fails.
    public var maxOutboundAcks: Int
    /// Entries one SETTINGS frame may carry.
    public var maxSettingsEntries: Int
    /// CONTINUATION frames one header block may use (the 2024 CONTINUATION flood).
    public var maxContinuations: Int
    /// The token bucket for the peer's RST_STREAM frames (the 2023 rapid reset attack): `burst`
    /// resets at once, then `rate` a second; past it nghttp2 ends the connection.
    public var streamResetBurst: UInt64
    /// See `streamResetBurst`.
    public var streamResetRate: UInt64

    /// The defaults described above; any of them can be given.
    public init(
        maxConcurrentStreams: UInt32 = 1024, initialWindowSize: UInt32 = 65_535, maxFrameSize: UInt32 = 16_384,
        maxHeaderListSize: UInt32 = 16_384, maxOutboundAcks: Int = 1000, maxSettingsEntries: Int = 32,
        maxContinuations: Int = 8, streamResetBurst: UInt64 = 1000, streamResetRate: UInt64 = 33
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.initialWindowSize = initialWindowSize
        self.maxFrameSize = maxFrameSize
        self.maxHeaderListSize = maxHeaderListSize
        self.maxOutboundAcks = maxOutboundAcks
        self.maxSettingsEntries = maxSettingsEntries
        self.maxContinuations = maxContinuations
        self.streamResetBurst = streamResetBurst
        self.streamResetRate = streamResetRate
    }
}
