/// One page of a keyset-paged list.
///
/// `nextCursor` is opaque and empty exactly when nothing is left; passing it back continues after
/// the last item, so rows added or removed between pages never make another row repeat or vanish.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var nextCursor: String

    public init(items: [Item], nextCursor: String) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

extension Page: Equatable where Item: Equatable {}
