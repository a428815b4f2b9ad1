import FuzzSupport
import ProtoBridge

@main
enum Main {
    static func main() { runFuzzer(fuzzMessages) }
}

/// libFuzzer entry point: every generated message decoder.
///
/// The first byte picks the message type (`FuzzTypes`), the rest is decoded with
/// `init(serializedBytes:)`. It must decode or fail exactly as through protobuf-c
/// (`decodedByProtobufC`), and whatever decodes must survive a round trip: encoded as protobuf-c
/// packs it, re-encoded and decoded again, it is the same value, and its encoding has the size
/// `serializedSize()` announced.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessages(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    guard size > 0 else { return 0 }
    let type = FuzzTypes.type(selectedBy: data[0])
    let body = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    roundTrip(type, body)
    return 0
}

private func roundTrip<Message: ProtoMessage>(_ type: Message.Type, _ bytes: UnsafeRawBufferPointer) {
    // A message that codes itself in Swift (CheckPost's) must answer as protobuf-c does; for the
    // others both ways are protobuf-c's, and the checks cost a second decode and encode.
    let decoded = Result { () throws(ProtoDecodingError) in try Message(serializedBytes: bytes) }
    let decodedByProtobufC = Result { () throws(ProtoDecodingError) in try Message.decodedByProtobufC(bytes) }
    fuzzCheck(
        decoded == decodedByProtobufC,
        "\(Message.protoName): decoded \(decoded), protobuf-c decoded \(decodedByProtobufC)")
    guard case .success(let message) = decoded else { return }
    let encoded = message.serializedBytes()
    var encodedByProtobufC: [UInt8] = []
    message.encodeByProtobufC(appendingTo: &encodedByProtobufC)
    fuzzCheck(encoded == encodedByProtobufC, "\(Message.protoName): encoded otherwise than protobuf-c packs")
    fuzzCheck(
        encoded.count == message.serializedSize(),
        "\(Message.protoName): encoded \(encoded.count) bytes, serializedSize said \(message.serializedSize())")
    let again: Message
    do {
        again = try Message(serializedBytes: encoded)
    } catch {
        fuzzCheck(false, "\(Message.protoName): re-encoded value does not decode: \(error)")
        return
    }
    fuzzCheck(again == message, "\(Message.protoName): round trip changed the value:\n\(message)\n\(again)")
}
