extension DynamicMessage {
    /// Reads a message of `descriptor`'s type from protobuf's text format (`uid: "alice" name:
    /// "Alice"`, `members { uid: "bob" scope: SCOPE_ADMIN }`; see `TextFormatParser`).
    /// - Throws: `.invalidTextFormat` with the line and column of text that cannot be read, or
    ///   naming the field whose value does not fit, as the JSON reader does.
    public init(
        textFormat text: String, as descriptor: MessageDescriptor,
        maximumDepth: Int = DynamicMessage.defaultMaximumDepth
    ) throws(ProtoSchemaError) {
        self = try TextFormatDecoder.decode(text, as: descriptor, maximumDepth: maximumDepth)
    }

    /// The message in protobuf's text format: multi-line, or (`singleLine`) on one line.
    /// - Parameter emitDefaults: also print scalar fields at their zero values (not oneof members,
    ///   repeated fields or messages, which text format has no way to show empty).
    public func textFormatString(singleLine: Bool = false, emitDefaults: Bool = false) -> String {
        TextFormatEncoder.encode(self, singleLine: singleLine, emitDefaults: emitDefaults)
    }
}
