/// A user to add to a group with the scope to give them (`AddMembers`, initial members).
public struct MemberGrant: Sendable, Equatable {
    public var uid: String
    public var scope: Scope

    public init(uid: String, scope: Scope = .participant) {
        self.uid = uid
        self.scope = scope
    }
}
