internal import Moderation

/// The search variants of the list statements: a filter on the folded keyword added to the plain
/// statement, sent unprepared so that PostgreSQL plans each search for its keyword (a rare one
/// through the trigram indexes, a common one by walking the list in order and filtering).
///
/// Semantics as in the SQLite store: a case-sensitive substring of the uid (or guid) or of the
/// folded name, both already folded by the domain (`TextFolding`); `LIKE` with the keyword's
/// `%`, `_` and `\` escaped is that substring test, and `pg_trgm`'s GIN indexes serve it.
enum SearchSQL {
    /// Members matching $7 (a `LIKE` pattern); the other parameters as `Statement.membersPage`.
    static let members = """
        SELECT \(Statement.memberColumns) \(Statement.membersFrom)
          AND (u.uid LIKE $7::text OR u.name_folded LIKE $7::text)
        \(Statement.membersOrder)
        """

    /// Bans matching $6; the other parameters as `Statement.bansPage`.
    static let bans = """
        SELECT \(Statement.banColumns) \(Statement.bansFrom)
          AND (u.uid LIKE $6::text OR u.name_folded LIKE $6::text)
        \(Statement.bansOrder)
        """

    /// The app's bans matching $6; the other parameters as `Statement.appBansPage`.
    static let appBans = """
        SELECT \(Statement.appBanColumns) \(Statement.appBansFrom)
          AND (u.uid LIKE $6::text OR u.name_folded LIKE $6::text)
        \(Statement.appBansOrder)
        """

    /// Groups matching $10; the other parameters as `Statement.groupsPage`.
    static let groups = """
        SELECT \(Statement.groupColumns), m.scope, m.joined_at \(Statement.groupsFrom)
          AND (g.guid LIKE $10::text OR g.name_folded LIKE $10::text)
        \(Statement.groupsOrder)
        """

    /// The viewer's groups matching $10; the other parameters as `Statement.groupsPageJoined`.
    static let groupsJoined = """
        SELECT \(Statement.groupColumns), m.scope, m.joined_at \(Statement.groupsJoinedFrom)
          AND (g.guid LIKE $10::text OR g.name_folded LIKE $10::text)
        \(Statement.groupsOrder)
        """

    /// One page of a list: its prepared `statement`, or, to search for `keyword`, the statement's
    /// search variant `searchSQL` (planned for that keyword), with the keyword's pattern as the
    /// parameter after `parameters`.
    static func page(
        _ statement: Statement, orSearch searchSQL: String, for keyword: String, _ parameters: [PGValue],
        on connection: PGConnection
    ) throws(ModerationError) -> PGResult {
        guard !keyword.isEmpty else { return try connection.query(statement, parameters) }
        var parameters = parameters
        parameters.append(pattern(keyword))
        return try connection.query(sql: searchSQL, parameters)
    }

    /// The `LIKE` pattern of a substring search for `keyword`.
    static func pattern(_ keyword: String) -> PGValue {
        var escaped = "%"
        for character in keyword.unicodeScalars {
            if character == "%" || character == "_" || character == "\\" { escaped += "\\" }
            escaped.unicodeScalars.append(character)
        }
        return .text(escaped + "%")
    }
}
