internal import CNGHTTP2
internal import Glibc

/// One header block, received or to send: its fields in one allocation, laid out as nghttp2's
/// name/value array over the names' and values' bytes, with each name's `HTTP2CommonName` noted.
///
/// A received block is made once per HEADERS frame from the bytes nghttp2 hands over (no array
/// and no string per field); its reader goes through `field(_:)`, which gives the bytes in place
/// and the common name already recognised. A block to send is prepared once — the fields that
/// start every gRPC response, the OK trailers — and submitted as it is for every call. nghttp2's
/// submit functions copy the array and the strings into one allocation of their own (which they
/// make with or without the `NO_COPY` flags), so a block need not outlive the submit call.
///
/// Also a collection of `HTTP2Header` (each made on access), for code off the hot path.
/// Immutable once made; `Sendable`.
public final class HTTP2HeaderBlock: @unchecked Sendable, RandomAccessCollection, ExpressibleByArrayLiteral,
    Equatable, CustomStringConvertible
{
    /// One field's bytes in place, valid while the block (or the view it came from) is alive.
    public struct Field {
        /// The name when it is one of the common ones (recognised once, as the block was made).
        public let commonName: HTTP2CommonName?
        public let name: UnsafeBufferPointer<UInt8>
        public let value: UnsafeBufferPointer<UInt8>

        @inlinable
        public init(commonName: HTTP2CommonName?, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
            self.commonName = commonName
            self.name = name
            self.value = value
        }
    }

    /// The `nghttp2_nv` array, then one `HTTP2HeaderFields.Entry` per field, then every name and
    /// value back to back (and a zero byte, so that the address is valid when all are empty).
    private let storage: UnsafeMutableRawPointer
    public let count: Int
    /// Its size as RFC 9113 counts a header list: names, values and 32 bytes per field.
    public let listSize: Int

    /// A block of `headers` (a prepared block to send, mostly).
    public convenience init(_ headers: [HTTP2Header]) {
        var bytes: [UInt8] = []
        var lengths: [(name: Int, value: Int)] = []
        lengths.reserveCapacity(headers.count)
        for header in headers {
            bytes.append(contentsOf: header.name.utf8)
            bytes.append(contentsOf: header.value)
            lengths.append((header.name.utf8.count, header.value.count))
        }
        self.init(byteCount: bytes.count, lengths: lengths) { text in
            bytes.withUnsafeBufferPointer {
                if let base = $0.baseAddress { text.initialize(from: base, count: $0.count) }
            }
        }
    }

    public convenience init(arrayLiteral headers: HTTP2Header...) {
        self.init(headers)
    }

    /// A block of fields whose names and values, `byteCount` bytes back to back in `lengths`,
    /// `fill` copies to the pointer it is given.
    init(byteCount: Int, lengths: [(name: Int, value: Int)], fill: (UnsafeMutablePointer<UInt8>) -> Void) {
        count = lengths.count
        listSize = byteCount + 32 * lengths.count
        let arrayBytes = MemoryLayout<nghttp2_nv>.stride * count
        let entryBytes = MemoryLayout<HTTP2HeaderFields.Entry>.stride * count
        storage = .allocate(
            byteCount: arrayBytes + entryBytes + byteCount + 1, alignment: MemoryLayout<nghttp2_nv>.alignment)
        let fields = storage.bindMemory(to: nghttp2_nv.self, capacity: count)
        let entries = (storage + arrayBytes).bindMemory(to: HTTP2HeaderFields.Entry.self, capacity: count)
        let text = (storage + arrayBytes + entryBytes).bindMemory(to: UInt8.self, capacity: byteCount + 1)
        fill(text)
        text[byteCount] = 0
        var offset = 0
        for (index, length) in lengths.enumerated() {
            let cursor = text + offset
            let name = UnsafeBufferPointer(start: cursor, count: length.name)
            (fields + index).initialize(
                to: nghttp2_nv(
                    name: cursor, value: cursor + length.name, namelen: length.name, valuelen: length.value,
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            (entries + index).initialize(
                to: HTTP2HeaderFields.Entry(
                    nameOffset: Int32(offset), nameLength: Int32(length.name), valueLength: Int32(length.value),
                    code: HTTP2CommonName(name)?.rawValue ?? HTTP2CommonName.noCode))
            offset += length.name + length.value
        }
        self.fields = HTTP2HeaderFields(
            bytes: UnsafePointer(text), entries: UnsafePointer(entries), count: count)
    }

    /// The fields, read in place (valid while the block is alive).
    public let fields: HTTP2HeaderFields

    deinit { storage.deallocate() }

    /// Field `index`'s name (recognised) and value, as bytes in place.
    public func field(_ index: Int) -> Field { fields.field(index) }

    /// Calls `body` with the block as nghttp2's name/value array (valid during the call).
    func withNameValues<R>(_ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
        body(storage.assumingMemoryBound(to: nghttp2_nv.self), count)
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(index: Int) -> HTTP2Header {
        let field = field(index)
        return HTTP2Header(
            name: field.commonName?.text ?? String(decoding: field.name, as: UTF8.self), value: Array(field.value))
    }

    public static func == (lhs: HTTP2HeaderBlock, rhs: HTTP2HeaderBlock) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return (0..<lhs.count).allSatisfy { index in
            let left = lhs.field(index)
            let right = rhs.field(index)
            return left.name.elementsEqual(right.name) && left.value.elementsEqual(right.value)
        }
    }

    public var description: String {
        "[" + map { "\($0.name): \($0.stringValue)" }.joined(separator: ", ") + "]"
    }
}

/// Names that come with nearly every request or response (HTTP/2's pseudo-headers, gRPC's own):
/// a received block notes which field is which as it is made, so its reader switches on these
/// instead of comparing or hashing strings.
public enum HTTP2CommonName: UInt8, CaseIterable, Sendable {
    case method, path, scheme, authority, status, contentType, te, userAgent, authorization
    case grpcTimeout, grpcEncoding, grpcAcceptEncoding, grpcStatus, grpcMessage, acceptEncoding, contentLength

    /// The code of a name that is none of these.
    static let noCode: UInt8 = .max

    /// The name as on the wire.
    public var text: String { String(describing: staticText) }

    private var staticText: StaticString {
        switch self {
        case .method: ":method"
        case .path: ":path"
        case .scheme: ":scheme"
        case .authority: ":authority"
        case .status: ":status"
        case .contentType: "content-type"
        case .te: "te"
        case .userAgent: "user-agent"
        case .authorization: "authorization"
        case .grpcTimeout: "grpc-timeout"
        case .grpcEncoding: "grpc-encoding"
        case .grpcAcceptEncoding: "grpc-accept-encoding"
        case .grpcStatus: "grpc-status"
        case .grpcMessage: "grpc-message"
        case .acceptEncoding: "accept-encoding"
        case .contentLength: "content-length"
        }
    }

    /// The common name `bytes` spell, if any: the names of its length compared byte for byte
    /// (no table, no hashing; this runs for every field received).
    public init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return nil }
        /// The first of the candidates (all of `bytes`' length) that `bytes` spell.
        func first(_ a: Self, _ b: Self? = nil, _ c: Self? = nil) -> Self? {
            if memcmp(a.staticText.utf8Start, base, bytes.count) == 0 { return a }
            if let b, memcmp(b.staticText.utf8Start, base, bytes.count) == 0 { return b }
            if let c, memcmp(c.staticText.utf8Start, base, bytes.count) == 0 { return c }
            return nil
        }
        let found: Self? =
            switch bytes.count {
            case 2: first(.te)
            case 5: first(.path)
            case 7: first(.method, .scheme, .status)
            case 10: first(.authority, .userAgent)
            case 11: first(.grpcStatus)
            case 12: first(.contentType, .grpcTimeout, .grpcMessage)
            case 13: first(.authorization, .grpcEncoding)
            case 14: first(.contentLength)
            case 15: first(.acceptEncoding)
            case 20: first(.grpcAcceptEncoding)
            default: nil
            }
        guard let found else { return nil }
        self = found
    }
}
