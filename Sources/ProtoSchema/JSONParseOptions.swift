/// How `DynamicMessage(jsonString:as:options:)` reads JSON.
///
/// Strict by default, so a typo in a field name is an error with a suggestion rather than a
/// request silently sent without that field.
public struct JSONParseOptions: Sendable, Hashable {
    /// Skip members that name no field of the message instead of refusing them.
    public var ignoreUnknownFields: Bool
    /// How deep messages may nest before the input is refused.
    public var maximumDepth: Int

    public init(ignoreUnknownFields: Bool = false, maximumDepth: Int = DynamicMessage.defaultMaximumDepth) {
        self.ignoreUnknownFields = ignoreUnknownFields
        self.maximumDepth = maximumDepth
    }
}
