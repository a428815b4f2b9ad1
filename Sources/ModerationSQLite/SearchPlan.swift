internal import Moderation

/// How a substring search runs.
///
/// Through the trigram index (`search_grams`) when the keyword has 3+ characters and one of its
/// trigrams is rare enough (carried by at most `searchCandidateLimit` users or groups of the
/// app): the ids carrying its two rarest trigrams are the candidates, checked with `instr`. Else
/// by scanning the list in its own order with `instr`, which stops as soon as a page is full —
/// fast exactly when matches are common, which is when the index cannot help.
enum SearchPlan: Equatable {
    /// No keyword.
    case none
    /// Filter rows with `instr` on the folded keyword.
    case scan(keyword: String)
    /// Only these ids (a JSON array for `json_each`) can match; check them with `instr`.
    case candidates(keyword: String, ids: String)

    /// What `search_grams.kind` says a trigram belongs to.
    enum Kind: Int {
        case user = 1
        case group = 2
    }

    /// The distinct trigrams of `text`, each three Unicode scalars packed 21 bits apiece.
    static func grams(_ text: String) -> Set<Int64> {
        let scalars = text.unicodeScalars.map { Int64($0.value) }
        guard scalars.count >= 3 else { return [] }
        var grams = Set<Int64>(minimumCapacity: scalars.count - 2)
        for index in 0..<(scalars.count - 2) {
            grams.insert(scalars[index] << 42 | scalars[index + 1] << 21 | scalars[index + 2])
        }
        return grams
    }
}

extension SQLiteSession {
    /// Chooses how to search `kind` rows of an app for the folded `keyword`.
    func searchPlan(_ keyword: String, kind: SearchPlan.Kind, appID: Int64) throws(ModerationError) -> SearchPlan {
        if keyword.isEmpty { return .none }
        let grams = SearchPlan.grams(keyword)
        if grams.isEmpty { return .scan(keyword: keyword) }
        var counted: [(gram: Int64, count: Int)] = []
        for gram in grams {
            let count = try connection.row(.gramCount, kind.rawValue, appID, gram) { $0.int(0) } ?? 0
            if count == 0 { return .candidates(keyword: keyword, ids: "[]") }
            counted.append((gram, count))
        }
        counted.sort { $0.count < $1.count }
        guard counted[0].count <= options.searchCandidateLimit else { return .scan(keyword: keyword) }
        let rarest = counted[0].gram
        let second = counted.count > 1 ? counted[1].gram : nil
        let ids = try connection.run(second == nil ? .gramIDs : .gramIDsOfTwo) {
            (statement) throws(ModerationError) -> [Int64] in
            statement.bind(from: 1, kind.rawValue, appID, rarest)
            if let second { statement.bind(4, second) }
            return try statement.rows { $0.int64(0) }
        }
        return .candidates(keyword: keyword, ids: JSON.array(ids))
    }

    /// A user's or group's searchable texts as stored: its key (uid or guid) and folded name,
    /// with its app.
    struct SearchableRow {
        let key: String
        let folded: String
        let appID: Int64
    }

    /// Inserts a user or group whose statement takes ?1 app, ?2 key (uid or guid), ?3 name and
    /// ?4 folded name first (`bind` binds the rest), and indexes its key and folded name for
    /// search with it; returns the new row's id.
    func insertSearchable(
        _ query: Query, kind: SearchPlan.Kind, appID: Int64, key: String, name: String, bind: (SQLiteStatement) -> Void
    ) throws(ModerationError) -> Int64 {
        let folded = TextFolding.fold(name)
        try connection.run(query) { (statement) throws(ModerationError) in
            statement.bind(from: 1, appID, key, name, folded)
            bind(statement)
            try statement.execute()
        }
        let id = connection.lastInsertedRowID
        try indexSearch(kind: kind, appID: appID, id: id, old: nil, new: [key, folded])
        return id
    }

    /// The stored searchable texts of row `id`, read by `query` (`.userFolded`, `.groupFolded`).
    func searchableRow(_ query: Query, id: Int64) throws(ModerationError) -> SearchableRow? {
        try connection.row(query, id) { statement in
            SearchableRow(key: statement.string(0), folded: statement.string(1), appID: statement.int64(2))
        }
    }

    /// After a user or group was renamed from `old`: moves its index entries to the new texts.
    func reindexSearch(kind: SearchPlan.Kind, id: Int64, old: SearchableRow, key: String, folded: String)
        throws(ModerationError)
    {
        guard old.folded != folded else { return }
        try indexSearch(kind: kind, appID: old.appID, id: id, old: [old.key, old.folded], new: [key, folded])
    }

    /// Keeps the trigram index of one user or group in step with its searchable texts (nil
    /// `old` for a new entity, empty `new` for a deleted one).
    func indexSearch(kind: SearchPlan.Kind, appID: Int64, id: Int64, old: [String]?, new: [String])
        throws(ModerationError)
    {
        let before = (old ?? []).reduce(into: Set<Int64>()) { $0.formUnion(SearchPlan.grams($1)) }
        let after = new.reduce(into: Set<Int64>()) { $0.formUnion(SearchPlan.grams($1)) }
        for gram in before.subtracting(after) {
            try changeGram(.gramDelete, kind: kind, appID: appID, id: id, gram: gram, delta: -1)
        }
        for gram in after.subtracting(before) {
            try changeGram(.gramInsert, kind: kind, appID: appID, id: id, gram: gram, delta: 1)
        }
    }

    private func changeGram(_ query: Query, kind: SearchPlan.Kind, appID: Int64, id: Int64, gram: Int64, delta: Int)
        throws(ModerationError)
    {
        try connection.execute(query, kind.rawValue, appID, gram, id)
        try connection.execute(.gramCountAdd, kind.rawValue, appID, gram, delta)
    }
}
