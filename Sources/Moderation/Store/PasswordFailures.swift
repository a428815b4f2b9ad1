/// A key's wrong passwords still inside the window, as the limit needs them.
public struct PasswordFailures: Sendable, Equatable {
    /// How many.
    public var count: Int
    /// When the first of them (in the order they were recorded) was made, Unix milliseconds;
    /// nil when there is none.
    public var first: Int64?

    public init(count: Int, first: Int64?) {
        self.count = count
        self.first = first
    }
}
