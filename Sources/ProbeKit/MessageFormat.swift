import CommandLineSupport
import ProtoSchema

/// How `call` and `watch` read requests and print messages (`--format`, grpcurl's `-format`):
/// proto3 JSON, or protobuf's text format.
enum MessageFormat: Equatable {
    case json
    case text

    init(_ value: ArgumentValue) throws(ArgumentError) {
        switch value.text {
        case "json": self = .json
        case "text": self = .text
        default: throw value.error("expected json or text, got '\(value.text)'")
        }
    }

    /// Reads a request written in this format.
    func parse(_ text: String, as type: MessageDescriptor) throws(ProtoSchemaError) -> DynamicMessage {
        switch self {
        case .json: try DynamicMessage(jsonString: text, as: type)
        case .text: try DynamicMessage(textFormat: text, as: type)
        }
    }
}
