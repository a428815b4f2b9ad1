import FuzzSupport
import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages

/// Both schemas as rpc-probe sees them (descriptor-driven), built once.
private let schema: Schema = {
    do {
        return try Schema(fileDescriptorSets: [RPCSchema.fileDescriptorSet, ModerationSchema.fileDescriptorSet])
    } catch {
        fuzzCheck(false, "the embedded descriptor sets do not load: \(error)")
        fatalError()
    }
}()

/// The descriptor of each `FuzzTypes` entry, same order.
private let descriptors: [MessageDescriptor] = FuzzTypes.all.map { type in
    guard let descriptor = schema.message(named: type.protoName) else {
        fuzzCheck(false, "\(type.protoName) is not in the schema")
        fatalError()
    }
    return descriptor
}

private let printOptions = [
    JSONFormatOptions(),
    JSONFormatOptions(emitDefaults: true, pretty: true, preserveProtoFieldNames: true),
]

@main
enum Main {
    static func main() { runFuzzer(fuzzJSON) }
}

/// libFuzzer entry point: the proto3 JSON transcoder.
///
/// The first byte picks the message type (`FuzzTypes`), the rest is parsed as JSON for it. What
/// parses must print as JSON that parses back to the same message and prints the same again
/// (with default and with all-fields, proto-name, pretty options), must survive the wire
/// encoding, and must mean the same to the generated decoder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    guard size > 0 else { return 0 }
    let index = Int(data[0]) % descriptors.count
    let descriptor = descriptors[index]
    let text = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    guard let message = try? DynamicMessage(jsonUTF8: text, as: descriptor) else { return 0 }

    for options in printOptions {
        let printed = message.jsonUTF8(options: options)
        let reparsed: DynamicMessage
        do {
            reparsed = try DynamicMessage(jsonUTF8: printed, as: descriptor)
        } catch {
            fuzzCheck(
                false,
                "\(descriptor.fullName): printed JSON does not parse (\(error)):\n\(String(decoding: printed, as: UTF8.self))"
            )
            return 0
        }
        fuzzCheck(
            reparsed == message, "\(descriptor.fullName): JSON round trip changed the message:\n\(message)\n\(reparsed)"
        )
        let reprinted = reparsed.jsonUTF8(options: options)
        fuzzCheck(
            reprinted == printed,
            "\(descriptor.fullName): printing is not stable:\n\(String(decoding: printed, as: UTF8.self))\n\(String(decoding: reprinted, as: UTF8.self))"
        )
    }

    let wire = message.serializedBytes()
    do {
        let decoded = try DynamicMessage(serializedBytes: wire, as: descriptor)
        fuzzCheck(
            decoded == message, "\(descriptor.fullName): wire round trip changed the message:\n\(message)\n\(decoded)")
    } catch {
        fuzzCheck(false, "\(descriptor.fullName): its own wire encoding does not decode: \(error)")
    }
    agreeWithGenerated(FuzzTypes.all[index], wire: wire, message: message)
    return 0
}

/// The generated (protobuf-c) decoder reads the transcoder's encoding as the same message: what
/// it re-encodes decodes, descriptor-driven, to the message again. It may refuse what protobuf-c
/// cannot hold (a string with U+0000), never the reverse.
private func agreeWithGenerated<Message: ProtoMessage>(_ type: Message.Type, wire: [UInt8], message: DynamicMessage) {
    guard let generated = try? Message(serializedBytes: wire) else { return }
    let back = generated.serializedBytes()
    do {
        let decoded = try DynamicMessage(serializedBytes: back, as: message.descriptor)
        fuzzCheck(
            decoded == message,
            "\(Message.protoName): the generated decoder read the transcoder's encoding differently:\n\(message)\n\(decoded)"
        )
    } catch {
        fuzzCheck(false, "\(Message.protoName): the generated encoding does not decode descriptor-driven: \(error)")
    }
}
