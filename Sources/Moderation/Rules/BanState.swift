/// Whether a user is banned from a group, as the rules see it at the time of a change.
enum BanState {
    /// No ban row.
    case none
    /// A ban that applies now.
    case active(Ban)
    /// A ban past its expiry whose row is still there (the sweeper has not recorded it).
    case expired(Ban)

    /// The ban that applies, if any.
    var active: Ban? {
        if case .active(let ban) = self { return ban }
        return nil
    }
}
