/// Where an acting or target user stands in a group, for "outranks" comparisons.
///
/// SERVICE.md's order is owner > admin > moderator > participant > non-member; "outranks" is
/// strict. The app (an API key acting without `on_behalf_of`) has every right an owner has and
/// ranks above everyone, so it outranks even the owner; the invariants that protect the owner are
/// separate checks that apply to everyone.
public enum Rank: Int, Sendable, Comparable, CaseIterable {
    case nonMember
    case participant
    case moderator
    case admin
    case owner
    case app

    /// True when `self` is strictly above `other`.
    public func outranks(_ other: Rank) -> Bool { self > other }

    /// True for admins, the owner and the app: those with full management rights.
    public var isAdminOrAbove: Bool { self >= .admin }

    /// True for moderators and everyone above.
    public var isModeratorOrAbove: Bool { self >= .moderator }

    /// True for the owner and the app.
    public var isOwnerOrApp: Bool { self >= .owner }

    public static func < (lhs: Rank, rhs: Rank) -> Bool { lhs.rawValue < rhs.rawValue }
}
