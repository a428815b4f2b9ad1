/// Who may see and join a group.
public enum GroupType: String, Sendable, CaseIterable {
    /// Anyone may see and join it.
    case `public`
    /// Anyone may see it; joining needs the group's password.
    case password
    /// Only members see it; users get in only when added.
    case `private`
}
