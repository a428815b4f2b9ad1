/// A header list's fields read in place: the names' and values' bytes back to back, and one entry
/// per field giving where its name is, the lengths, and its `HTTP2CommonName` (recognised once).
///
/// Borrowed, not owned: a server session hands a request's fields to its delegate as a view of
/// its own receive buffer, valid only during that call (no block is allocated for a request); an
/// `HTTP2HeaderBlock` gives a view of its own storage, valid while the block is alive.
public struct HTTP2HeaderFields {
    /// One field's place in the bytes.
    @usableFromInline struct Entry {
        @usableFromInline var nameOffset: Int32
        @usableFromInline var nameLength: Int32
        @usableFromInline var valueLength: Int32
        /// `HTTP2CommonName.rawValue`, or `HTTP2CommonName.noCode`.
        @usableFromInline var code: UInt8

        @usableFromInline init(nameOffset: Int32, nameLength: Int32, valueLength: Int32, code: UInt8) {
            self.nameOffset = nameOffset
            self.nameLength = nameLength
            self.valueLength = valueLength
            self.code = code
        }
    }

    @usableFromInline let bytes: UnsafePointer<UInt8>
    @usableFromInline let entries: UnsafePointer<Entry>
    /// The number of fields.
    public let count: Int

    @usableFromInline init(bytes: UnsafePointer<UInt8>, entries: UnsafePointer<Entry>, count: Int) {
        self.bytes = bytes
        self.entries = entries
        self.count = count
    }

    /// Field `index`'s name (recognised) and value, as bytes in place.
    @inlinable
    public func field(_ index: Int) -> HTTP2HeaderBlock.Field {
        precondition(index >= 0 && index < count, "header field \(index) of \(count)")
        let entry = entries[index]
        let name = bytes + Int(entry.nameOffset)
        return HTTP2HeaderBlock.Field(
            commonName: HTTP2CommonName(rawValue: entry.code),
            name: UnsafeBufferPointer(start: name, count: Int(entry.nameLength)),
            value: UnsafeBufferPointer(start: name + Int(entry.nameLength), count: Int(entry.valueLength)))
    }

    /// Its size as RFC 9113 counts a header list: names, values and 32 bytes per field.
    public var listSize: Int {
        var size = 32 * count
        for index in 0..<count { size += Int(entries[index].nameLength) + Int(entries[index].valueLength) }
        return size
    }

    /// The value of the first field called `name`, as text.
    public func first(named name: String) -> String? {
        let wanted = Array(name.utf8)
        for index in 0..<count {
            let field = field(index)
            if field.name.elementsEqual(wanted) { return String(decoding: field.value, as: UTF8.self) }
        }
        return nil
    }

    /// A block of its own holding these fields (for a caller that keeps them).
    public func block() -> HTTP2HeaderBlock {
        var lengths: [(name: Int, value: Int)] = []
        var total = 0
        for index in 0..<count {
            let entry = entries[index]
            lengths.append((Int(entry.nameLength), Int(entry.valueLength)))
            total += Int(entry.nameLength) + Int(entry.valueLength)
        }
        let entries = self.entries
        let bytes = self.bytes
        let count = self.count
        return HTTP2HeaderBlock(byteCount: total, lengths: lengths) { destination in
            var cursor = destination
            for index in 0..<count {
                let entry = entries[index]
                let length = Int(entry.nameLength) + Int(entry.valueLength)
                cursor.initialize(from: bytes + Int(entry.nameOffset), count: length)
                cursor += length
            }
        }
    }
}
