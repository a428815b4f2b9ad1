/// A change to a user's profile (`UpdateUser`): nil leaves a field as it is.
///
/// The RPC adapter resolves the proto `update_mask` into these optionals.
public struct UserUpdate: Sendable, Equatable {
    public var uid: String
    public var name: String?
    public var avatar: String?
    /// Replaces the whole metadata map when set.
    public var metadata: [String: String]?

    public init(uid: String, name: String? = nil, avatar: String? = nil, metadata: [String: String]? = nil) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.metadata = metadata
    }
}
