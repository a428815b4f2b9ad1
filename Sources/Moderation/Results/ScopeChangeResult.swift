/// What `ChangeMemberScope` returns: the `scopeChanged` action and the member after it.
public struct ScopeChangeResult: Sendable, Equatable {
    public var action: ActionRecord
    public var member: Member
}
