/// What an entry of the action log records; the raw values are the seeds' action strings.
public enum ActionKind: String, Sendable, CaseIterable {
    case created
    case updated
    case deleted
    case joined
    case left
    case added
    case kicked
    case banned
    case unbanned
    case scopeChanged
    case ownershipTransferred
    case muted
    case unmuted
    case frozen
    case unfrozen
    case userDeleted
    case invited
    case inviteAccepted
    case inviteDeclined
    case inviteRevoked
    case joinRequested
    case joinRequestApproved
    case joinRequestRejected
    case joinRequestCancelled
    case reported
    case reportResolved
    case appBanned
    case appUnbanned
    case contentRulesChanged
}

extension ActionRecord {
    /// True for the actions of the whole app (`appBanned`, `appUnbanned`, and `contentRulesChanged`
    /// of the app's set): they belong to no group, and their `group` is `Group.appWide`.
    public var isAppWide: Bool {
        kind == .appBanned || kind == .appUnbanned || (kind == .contentRulesChanged && group.guid.isEmpty)
    }

    /// True for the actions only the group's admins and moderators and the app may see: those of
    /// reports (which their reporter sees too) and changes to content rules (the app's set: the
    /// app only, since nobody moderates the whole app).
    public var isPrivate: Bool { kind == .reported || kind == .reportResolved || kind == .contentRulesChanged }

    /// The member who filed the report a private report action is about: the actor of
    /// `reported`, the target of `reportResolved`; nil for other actions.
    public var reporter: String? {
        switch kind {
        case .reported: actionBy.uid
        case .reportResolved: actionOn?.uid
        default: nil
        }
    }

    /// Whether a reader sees this action: every action but a private one, which only readers
    /// moderating the group (`moderates`: moderator and above, or the app) and a report's reporter
    /// (`viewer`) see.
    ///
    /// The member a `reported` action is about never sees it, even one who moderates the group.
    public func isVisible(to viewer: String?, moderates: Bool) -> Bool {
        guard isPrivate else { return true }
        guard let viewer else { return moderates }
        if reporter == viewer { return true }
        if kind == .reported && actionOn?.uid == viewer { return false }
        return moderates
    }
}
