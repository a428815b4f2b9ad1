/// A user as a store holds it: the domain value and the store's key for it.
public struct StoredUser: Sendable, Equatable {
    /// The store's key for the user; stable for the user's lifetime.
    public var id: Int64
    public var user: User

    public init(id: Int64, user: User) {
        self.id = id
        self.user = user
    }
}
