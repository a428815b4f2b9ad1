/// Whether a user is banned from the app, as the rules see it at the time of a change.
enum AppBanState {
    /// No ban row.
    case none
    /// A ban that applies now (a shadow ban included).
    case active(AppBan)
    /// A ban past its expiry whose row is still there (the sweeper has not recorded it).
    case expired(AppBan)
}
