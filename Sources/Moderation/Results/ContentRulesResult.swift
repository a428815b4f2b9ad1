/// The outcome of one rule of `AddContentRules` or one id of `DeleteContentRules`.
public struct ContentRuleOutcome: Sendable, Equatable {
    /// The rule added (or already in the set), or deleted; nil when refused.
    public var rule: ContentRule?
    /// Why it was refused: `ERR_INVALID_ARGUMENT` naming the pattern and the reason, or
    /// `ERR_CONTENT_RULE_NOT_FOUND`.
    public var error: ModerationError?
    /// True when it changed the set: false for a rule the set had already.
    public var changed: Bool
    /// For a deletion: the id asked for.
    public var id: UInt64 = 0
}

/// What `AddContentRules` and `DeleteContentRules` return.
public struct ContentRulesResult: Sendable, Equatable {
    /// One outcome per rule or id, in the order of the request.
    public var outcomes: [ContentRuleOutcome]
    /// The `contentRulesChanged` action, when something changed.
    public var action: ActionRecord?
    /// The set's version after the change, when something changed: what this server waits for
    /// before answering.
    var setVersion: ContentRuleSetVersion?
}
