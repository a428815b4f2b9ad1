internal import Moderation

/// How a substring search runs: through the trigram index when the keyword is long enough (3+
/// characters) and selective enough (at most `searchCandidateLimit` indexed rows match it in the
/// whole store), else by scanning the list in its own order and filtering — which stops as soon
/// as a page is full, so it is fast exactly when matches are common.
enum SearchPlan: Equatable {
    /// No keyword.
    case none
    /// Filter rows with `instr` on the folded keyword.
    case scan(String)
    /// Take candidates from the FTS5 trigram index with this phrase query.
    case index(String)

    /// The FTS5 phrase query matching `keyword` as a substring.
    static func phrase(_ keyword: String) -> String {
        var phrase = "\""
        for character in keyword {
            phrase.append(character)
            if character == "\"" { phrase.append("\"") }
        }
        phrase.append("\"")
        return phrase
    }
}

extension SQLiteSession {
    /// Chooses the plan for a folded `keyword`, counting index candidates with `counting`.
    func searchPlan(_ keyword: String, counting: Query) throws(ModerationError) -> SearchPlan {
        if keyword.isEmpty { return .none }
        if keyword.unicodeScalars.count < 3 { return .scan(keyword) }
        let phrase = SearchPlan.phrase(keyword)
        let limit = options.searchCandidateLimit
        let candidates = try connection.run(counting) { (statement) throws(ModerationError) -> Int in
            statement.bind(1, phrase)
            statement.bind(2, limit + 1)
            return try statement.step() ? statement.int(0) : 0
        }
        return candidates <= limit ? .index(phrase) : .scan(keyword)
    }
}

/// JSON text for `json_each` parameters.
enum JSON {
    /// A JSON array of strings.
    static func array(_ strings: [String]) -> String {
        var out = "["
        for (index, string) in strings.enumerated() {
            if index > 0 { out += "," }
            out += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\u{0}"..."\u{1F}":
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            out += "\""
        }
        return out + "]"
    }
}
