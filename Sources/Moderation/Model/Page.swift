/// One page of a keyset-paged list.
///
/// `nextCursor` is opaque and empty exactly when nothing is left; passing it back continues after
/// the last item, so rows added or removed between pages never make another row repeat or vanish.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var nextCursor: String
}

extension Page: Equatable where Item: Equatable {}

extension Page {
    /// A page with nothing in it and nothing after it.
    static var empty: Page { Page(items: [], nextCursor: "") }

    /// The page of `rows`, read as one row past `limit`: the first `limit` rows made items by
    /// `item`; when the extra row came back, the page goes on after the last item, as `cursor`
    /// encodes it.
    init<Row>(rows: [Row], limit: Int, item: (Row) -> Item, cursor: (Item) -> String) {
        let items = rows.prefix(limit).map(item)
        self.init(items: items, nextCursor: rows.count > limit ? items.last.map(cursor) ?? "" : "")
    }

    /// The page of `rows`, read as one row past `limit` (the rows are the items).
    init(rows: [Item], limit: Int, cursor: (Item) -> String) {
        self.init(rows: rows, limit: limit, item: { $0 }, cursor: cursor)
    }
}
