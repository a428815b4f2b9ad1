/// Whether a member is muted, as the rules see it at the time of a change or a read.
enum MuteState {
    /// Not muted (or not a member).
    case none
    /// A mute that applies now.
    case active(Mute)
    /// A mute past its expiry still on the membership (the sweeper has not recorded it).
    case expired(Mute)

    init(_ membership: Membership?, at now: Int64) {
        guard let mute = membership?.mute else {
            self = .none
            return
        }
        self = mute.isActive(at: now) ? .active(mute) : .expired(mute)
    }

    /// The mute that applies, if any.
    var active: Mute? {
        if case .active(let mute) = self { return mute }
        return nil
    }
}
