/// A failure of the descriptor-driven protobuf layer, with a message meant for people.
///
/// `rpc-probe` shows these to whoever typed the request, so every message says what was expected,
/// what was found and where: the message type and field path for a bad value, the line and column
/// for invalid JSON, the file and element for a broken descriptor set. The code lets callers tell
/// the kinds apart (a bad descriptor set is a server problem, bad JSON a user problem) and can
/// grow without breaking them.
public struct ProtoSchemaError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case invalidDescriptor
            case unknownSymbol
            case invalidWireFormat
            case invalidJSON
            case invalidJSONValue
            case invalidTextFormat
            case invalidValue
        }

        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// The `FileDescriptorSet` bytes are malformed, or reference types they do not define.
        public static let invalidDescriptor = Code(.invalidDescriptor)
        /// No service, method, message or enum has the name asked for.
        public static let unknownSymbol = Code(.unknownSymbol)
        /// Protobuf wire bytes are not a valid encoding of the expected message type.
        public static let invalidWireFormat = Code(.invalidWireFormat)
        /// Text is not valid JSON (RFC 8259).
        public static let invalidJSON = Code(.invalidJSON)
        /// Valid JSON that does not fit the message under the proto3 JSON mapping.
        public static let invalidJSONValue = Code(.invalidJSONValue)
        /// Text is not valid protobuf text format, or does not fit the message.
        public static let invalidTextFormat = Code(.invalidTextFormat)
        /// A value set from Swift does not fit the field's type.
        public static let invalidValue = Code(.invalidValue)

        public var description: String {
            switch wrapped {
            case .invalidDescriptor: "invalid descriptor"
            case .unknownSymbol: "unknown symbol"
            case .invalidWireFormat: "invalid wire format"
            case .invalidJSON: "invalid JSON"
            case .invalidJSONValue: "invalid JSON value"
            case .invalidTextFormat: "invalid text format"
            case .invalidValue: "invalid value"
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// The full, human-readable explanation.
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
