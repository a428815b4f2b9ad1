public import ContentMatching

/// How a content rule's pattern is read (`ContentRuleKind`).
public enum ContentRuleKind: Sendable, Equatable, Hashable, CaseIterable {
    /// Whole words, a phrase when the pattern has spaces; `*` at its start or end stands for any
    /// word prefix or suffix.
    case word
    /// A regular expression in the linear-time subset (no backreferences, no lookaround).
    case regex
    /// A link or bare host whose host is the domain or one of its subdomains.
    case domain
}

/// What a content rule's match does to a post (`ContentAction`).
public enum ContentAction: Sendable, Equatable, Hashable, CaseIterable {
    /// The post is refused (`ERR_CONTENT_BLOCKED`).
    case block
    /// The post is allowed, marked `flagged` for review.
    case flag
}

/// A content rule of the app's set (`guid` empty) or of a group's.
public struct ContentRule: Sendable, Equatable, Hashable {
    /// Assigned by the store: unique in the app, increasing in the order rules were added.
    public var id: UInt64
    /// The group whose set it is in; empty for the app's set.
    public var guid: String
    public var kind: ContentRuleKind
    /// What to look for, as the caller wrote it (1–200 characters).
    public var pattern: String
    public var action: ContentAction
    /// Free text for the people who keep the rules (≤ 255 characters).
    public var description: String
    /// When the rule was added, Unix milliseconds.
    public var createdAt: Int64
    /// Who added it ("@app" for the app).
    public var createdBy: String

    public init(
        id: UInt64, guid: String, kind: ContentRuleKind, pattern: String, action: ContentAction,
        description: String = "", createdAt: Int64, createdBy: String
    ) {
        self.id = id
        self.guid = guid
        self.kind = kind
        self.pattern = pattern
        self.action = action
        self.description = description
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}

/// A rule to add (`AddContentRules`): what the caller chooses of a `ContentRule`. A kind or action
/// of nil is one the request left unset (refused, naming the rule).
public struct NewContentRule: Sendable, Equatable {
    public var kind: ContentRuleKind?
    public var pattern: String
    public var action: ContentAction?
    public var description: String

    public init(kind: ContentRuleKind?, pattern: String, action: ContentAction?, description: String = "") {
        self.kind = kind
        self.pattern = pattern
        self.action = action
        self.description = description
    }
}

/// Where a content rule matched a post's text: the engine's match, byte offsets into the text as
/// sent.
public typealias ContentMatch = ContentMatching.ContentMatch
