internal import CNGHTTP2

/// Calls `body` with `headers` as nghttp2's name/value array, valid only during the call.
///
/// nghttp2's submit functions copy the array and the strings (no `NO_COPY` flags are set), so one
/// contiguous scratch buffer for all names and values, alive for the call, is enough.
func withNameValues<R>(_ headers: [HTTP2Header], _ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
    var storage: [UInt8] = []
    storage.reserveCapacity(headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.count } + 1)
    var lengths: [(name: Int, value: Int)] = []
    lengths.reserveCapacity(headers.count)
    for header in headers {
        storage.append(contentsOf: header.name.utf8)
        storage.append(contentsOf: header.value)
        lengths.append((header.name.utf8.count, header.value.count))
    }
    storage.append(0) // a valid address even when every field is empty
    return storage.withUnsafeMutableBufferPointer { bytes in
        var cursor = bytes.baseAddress!
        var fields: [nghttp2_nv] = []
        fields.reserveCapacity(headers.count)
        for length in lengths {
            let name = cursor
            let value = cursor + length.name
            cursor = value + length.value
            fields.append(
                nghttp2_nv(
                    name: name, value: value, namelen: length.name, valuelen: length.value,
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
        }
        return fields.withUnsafeBufferPointer { body($0.baseAddress, $0.count) }
    }
}
