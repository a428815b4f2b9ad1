import ProtoSchema
import RPCCore

/// How `call` and `watch` print a message: in which format (`--format`), with or without the
/// fields at their defaults (`--emit-defaults`), spread over lines (one unary response) or on
/// one line (stream messages, the envelope).
struct MessagePrinter {
    var format = MessageFormat.json
    var emitDefaults = false
    var pretty = false

    /// A message's bytes as text; bytes that do not decode become a JSON object saying why.
    func render(_ bytes: [UInt8], as type: MessageDescriptor) -> String {
        do throws(ProtoSchemaError) {
            let message = try DynamicMessage(serializedBytes: bytes, as: type)
            switch format {
            case .json:
                return message.jsonString(options: JSONFormatOptions(emitDefaults: emitDefaults, pretty: pretty))
            case .text: return message.textFormatString(singleLine: !pretty, emitDefaults: emitDefaults)
            }
        } catch {
            return
                "{\"error\":\(Logger.jsonString("the response does not decode as \(type.fullName): \(error.message)"))}"
        }
    }
}
