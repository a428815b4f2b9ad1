internal import CNGHTTP2

/// A header block to send, prepared once: its fields laid out as nghttp2's name/value array over
/// bytes the block owns, so submitting it builds nothing.
///
/// Blocks that start every response (`:status 200`, the content type, the OK trailers) are made
/// once and submitted for every call; a block made per call (an error's status fields) costs one
/// allocation. nghttp2's submit functions copy the array and the strings into one allocation of
/// their own (which they make with or without the `NO_COPY` flags), so a block need not outlive
/// the submit call.
///
/// Immutable once made; `Sendable`.
public final class HTTP2HeaderBlock: @unchecked Sendable, ExpressibleByArrayLiteral {
    /// The fields, in order.
    public let headers: [HTTP2Header]
    /// One allocation: the `nghttp2_nv` array, then every name and value back to back.
    private let storage: UnsafeMutableRawPointer
    private let count: Int

    public init(_ headers: [HTTP2Header]) {
        self.headers = headers
        count = headers.count
        let arrayBytes = MemoryLayout<nghttp2_nv>.stride * headers.count
        let textBytes = headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.count }
        // One byte more: a valid address even when every field is empty.
        storage = .allocate(byteCount: arrayBytes + textBytes + 1, alignment: MemoryLayout<nghttp2_nv>.alignment)
        let fields = storage.bindMemory(to: nghttp2_nv.self, capacity: headers.count)
        var cursor = (storage + arrayBytes).bindMemory(to: UInt8.self, capacity: textBytes + 1)
        for (index, header) in headers.enumerated() {
            let name = cursor
            for byte in header.name.utf8 {
                cursor.initialize(to: byte)
                cursor += 1
            }
            let value = cursor
            header.value.withUnsafeBufferPointer { bytes in
                if let base = bytes.baseAddress { cursor.initialize(from: base, count: bytes.count) }
            }
            cursor += header.value.count
            (fields + index).initialize(
                to: nghttp2_nv(
                    name: name, value: value, namelen: value - name, valuelen: header.value.count,
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
        }
        cursor.initialize(to: 0)
    }

    public convenience init(arrayLiteral headers: HTTP2Header...) {
        self.init(headers)
    }

    deinit { storage.deallocate() }

    /// True for a block with no fields (empty trailers end a response on its last DATA frame).
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the block as nghttp2's name/value array (valid during the call).
    func withNameValues<R>(_ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
        body(UnsafePointer(storage.assumingMemoryBound(to: nghttp2_nv.self)), count)
    }
}
