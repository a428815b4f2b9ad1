/// One content rule as the engine sees it: what to look for, and the id its matches carry.
///
/// The engine knows nothing of groups, actions or who made the rule: the caller keeps those by
/// `id` and reads them back from each `ContentMatch`.
public struct ContentRule: Hashable, Sendable {
    /// How `pattern` is read.
    public enum Kind: Hashable, Sendable {
        /// The pattern as whole words, a phrase when it has spaces; a `*` at its start or end
        /// stands for any word prefix or suffix (`spam*` matches `spammer`).
        case word
        /// A regular expression in Hyperscan's linear-time subset (no backreferences, no
        /// lookaround), matched case-insensitively against the normalized text, where each run of
        /// white space is one space (`a\s+b` matches `a \t b`; `a\s\sb` matches nothing) and
        /// `\w`, `\d`, `\b` are ASCII's (a letter without its accents mostly is).
        case regex
        /// A link or bare host whose host is the domain or one of its subdomains.
        case domain
    }

    public var id: UInt64
    public var kind: Kind
    public var pattern: String

    public init(id: UInt64, kind: Kind, pattern: String) {
        self.id = id
        self.kind = kind
        self.pattern = pattern
    }
}

/// Where a rule matched: byte offsets into the text as sent, `start` inclusive, `end` exclusive.
public struct ContentMatch: Hashable, Sendable, CustomStringConvertible {
    public var ruleID: UInt64
    public var start: Int
    public var end: Int

    public init(ruleID: UInt64, start: Int, end: Int) {
        self.ruleID = ruleID
        self.start = start
        self.end = end
    }

    public var description: String { "\(ruleID)@\(start)..<\(end)" }
}

/// A rule the engine refuses, with the reason: a regex Hyperscan does not compile (with
/// Hyperscan's own message), or a word or domain pattern with nothing to match.
public struct ContentRuleError: Error, Hashable, Sendable, CustomStringConvertible {
    public var ruleID: UInt64
    public var pattern: String
    public var reason: String

    public var description: String { "pattern \"\(pattern)\": \(reason)" }
}
