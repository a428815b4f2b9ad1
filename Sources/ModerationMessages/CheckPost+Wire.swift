import ByteCoding
public import ProtoBridge

// CheckPost is the hot path of a chat backend: a message service asks before every message, up
// to 100 pairs a call. Through protobuf-c, a pair cost more to decode than to answer (protobuf-c's
// unpack into C structs, then the bridge's copies out of them), so the request decodes itself
// here, in one pass over the bytes (the response's encoder is generated in Swift, like every
// message's). It accepts, refuses and reports exactly what protobuf-c does: `CheckPostWireTests`
// compares the two ways on valid, mutated and hostile bytes.

extension CheckPostRequest {
    /// Decodes the request in Swift. As protobuf-c and the bridge: a structural fault anywhere is
    /// `invalidEncoding`, and otherwise the first bad string (checks in order,
    /// guid before uid before text, the last occurrence of a field being the one that counts) is
    /// reported.
    public static func decoded(from bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) -> CheckPostRequest {
        var request = CheckPostRequest()
        // A check is at least 2 bytes and usually about 20; room for the service's 100 at most.
        request.checks.reserveCapacity(min(bytes.count / 16 + 1, 100))
        var badString: ProtoDecodingError?
        var scanner = ProtoWireScanner(bytes)
        do throws(ProtoWireScanner.Malformed) {
            while !scanner.isAtEnd {
                let key = try scanner.key()
                guard key.field == 1 else {
                    try scanner.skip(key.wireType)
                    continue
                }
                guard key.wireType == .lengthDelimited else { throw ProtoWireScanner.Malformed() }
                let fields = try PostCheck.fields(of: scanner.lengthDelimited())
                // After a bad string only the structure is still checked: it decides the error.
                guard badString == nil else { continue }
                do throws(ProtoDecodingError) {
                    request.checks.append(try PostCheck(fields))
                } catch {
                    badString = error.reported(as: protoName)
                }
            }
        } catch {
            throw .invalidEncoding(of: protoName)
        }
        if let badString { throw badString }
        return request
    }
}

extension PostCheck {
    /// The bytes of a PostCheck's fields, the last of each (as protobuf-c keeps it).
    fileprivate struct Fields {
        var guid: UnsafeRawBufferPointer?
        var uid: UnsafeRawBufferPointer?
        var text: UnsafeRawBufferPointer?
    }

    fileprivate static func fields(of bytes: UnsafeRawBufferPointer) throws(ProtoWireScanner.Malformed) -> Fields {
        var fields = Fields()
        var scanner = ProtoWireScanner(bytes)
        while !scanner.isAtEnd {
            let key = try scanner.key()
            switch key.field {
            case 1, 2, 3:
                guard key.wireType == .lengthDelimited else { throw ProtoWireScanner.Malformed() }
                let value = try scanner.lengthDelimited()
                switch key.field {
                case 1: fields.guid = value
                case 2: fields.uid = value
                default: fields.text = value
                }
            default:
                try scanner.skip(key.wireType)
            }
        }
        return fields
    }

    fileprivate init(_ fields: Fields) throws(ProtoDecodingError) {
        self.init(
            guid: try fields.guid.map { bytes throws(ProtoDecodingError) in
                try ProtoWireScanner.string(bytes, field: "guid", of: Self.protoName)
            } ?? "",
            uid: try fields.uid.map { bytes throws(ProtoDecodingError) in
                try ProtoWireScanner.string(bytes, field: "uid", of: Self.protoName)
            } ?? "",
            text: try fields.text.map { bytes throws(ProtoDecodingError) in
                try ProtoWireScanner.string(bytes, field: "text", of: Self.protoName)
            } ?? "")
    }
}
