/// A message could not be decoded: the bytes are not a valid encoding of the expected type.
///
/// protobuf-c reports only "failed"; the bridge adds which message type was expected and, where it
/// knows, which field was wrong (invalid UTF-8, an embedded NUL) or that the memory budget ran out.
public struct ProtoDecodingError: Error, Equatable, CustomStringConvertible {
    /// The fully-qualified type that was expected, e.g. "moderation.v1.KickMemberRequest".
    public var messageName: String
    /// What was wrong.
    public var reason: String

    public init(messageName: String, reason: String) {
        self.messageName = messageName
        self.reason = reason
    }

    public var description: String { "invalid \(messageName): \(reason)" }
}

extension ProtoDecodingError {
    /// The bytes are not a protobuf encoding of `message` (protobuf-c's unpack failed, or a
    /// Swift decoder found what would make it fail).
    public static func invalidEncoding(of message: String) -> ProtoDecodingError {
        ProtoDecodingError(messageName: message, reason: invalidEncodingReason)
    }

    static let invalidEncodingReason = "not a valid protobuf encoding"

    /// A `string` field held a NUL character, which protobuf-c's C strings cannot carry.
    public static func containsNUL(field: String, of message: String) -> ProtoDecodingError {
        ProtoDecodingError(messageName: message, reason: "field \(field) contains a NUL character")
    }

    /// A `string` field was not valid UTF-8, which proto3 requires.
    public static func invalidUTF8(field: String, of message: String) -> ProtoDecodingError {
        ProtoDecodingError(messageName: message, reason: "field \(field) is not valid UTF-8")
    }

    /// The error as seen from the top-level message being decoded, keeping the nested type's
    /// name in the reason: "field uid is not valid UTF-8 (in a nested moderation.v1.User)".
    public func reported(as topLevel: String) -> ProtoDecodingError {
        guard messageName != topLevel else { return self }
        return ProtoDecodingError(messageName: topLevel, reason: "\(reason) (in a nested \(messageName))")
    }
}
