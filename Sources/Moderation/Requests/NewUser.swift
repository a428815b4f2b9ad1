/// The fields of a user to create (`CreateUser`).
public struct NewUser: Sendable, Equatable {
    public var uid: String
    public var name: String
    public var avatar: String
    public var metadata: [String: String]

    public init(uid: String, name: String = "", avatar: String = "", metadata: [String: String] = [:]) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.metadata = metadata
    }
}
