extension DynamicMessage {
    /// Reads a message of `descriptor`'s type from proto3 JSON text.
    /// - Throws: `ProtoSchemaError`: `.invalidJSON` with the line and column for text that is
    ///   not JSON; `.invalidJSONValue` naming the field path for JSON that does not fit the type.
    public init(jsonString: String, as descriptor: MessageDescriptor, options: JSONParseOptions = JSONParseOptions())
        throws(ProtoSchemaError)
    {
        try self.init(jsonUTF8: Array(jsonString.utf8), as: descriptor, options: options)
    }

    /// Reads a message of `descriptor`'s type from proto3 JSON as UTF-8 bytes (checked to be
    /// valid UTF-8); see `init(jsonString:as:options:)`.
    public init(
        jsonUTF8 bytes: [UInt8], as descriptor: MessageDescriptor, options: JSONParseOptions = JSONParseOptions()
    ) throws(ProtoSchemaError) {
        let parsed = bytes.withUnsafeBytes { raw in
            Result { () throws(ProtoSchemaError) in try JSONParser.parse(raw) }
        }
        self = try JSONMessageDecoder.decode(try parsed.get(), as: descriptor, options: options)
    }

    /// The message as proto3 JSON text.
    public func jsonString(options: JSONFormatOptions = JSONFormatOptions()) -> String {
        String(decoding: jsonUTF8(options: options), as: UTF8.self)
    }

    /// The message as proto3 JSON, UTF-8 encoded.
    public func jsonUTF8(options: JSONFormatOptions = JSONFormatOptions()) -> [UInt8] {
        JSONMessageEncoder.encode(self, options: options)
    }
}
