/// A member's scope in a group: what the member may do there.
///
/// Scopes order by rank (`participant < moderator < admin`); the owner is a member with scope
/// `admin` and ranks above it (see `Rank`).
public enum Scope: String, Sendable, CaseIterable, Comparable {
    case admin
    case moderator
    case participant

    /// The rank of a (non-owner) member with this scope.
    public var rank: Rank {
        switch self {
        case .admin: .admin
        case .moderator: .moderator
        case .participant: .participant
        }
    }

    public static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rank < rhs.rank }
}
