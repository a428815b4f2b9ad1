import Moderation

/// Decides which actions a subscriber gets, tracking — for a user — which groups they belong to
/// as the log goes by, so "groups the user is a member of at the time of the action" holds for
/// every action, live or replayed.
struct SubscriptionFilter: Sendable {
    enum Target: Sendable {
        case user(uid: String, memberOf: Set<String>)
        case groups(Set<String>)
        case app
    }

    /// The target kept in parts, each changed in place: `admit` runs for every subscriber of
    /// every action, and taking an enum's payload apart and putting it back costs a retain and a
    /// release of each part per call.
    private enum Follows: Sendable {
        case user
        case groups
        case app
    }

    private var follows: Follows
    /// The user followed (`.user`).
    private var uid = ""
    /// The user's groups (`.user`), or the groups followed (`.groups`).
    private var groups: Set<String> {
        didSet { lastLookup = nil }
    }
    /// The last group looked up in `groups`, and whether it is there: a fan-out asks every
    /// subscriber about the same group, action after action, and hashing its id each time was
    /// the biggest part of a delivery.
    private var lastLookup: (guid: String, found: Bool)?
    let kinds: Set<ActionKind>
    /// Who reads the stream, for the privacy of reports: the user followed (`.user`), the
    /// acting user of a group subscription; nil for the app, which sees every action.
    let viewer: String?
    /// The groups where `viewer` is a moderator or above, tracked as the log goes by: they see
    /// the group's private report actions (others only those of reports they filed).
    var moderates: Set<String>

    init(target: Target, kinds: Set<ActionKind>, viewer: String? = nil, moderates: Set<String> = []) {
        self.kinds = kinds
        self.viewer = viewer
        self.moderates = moderates
        follows = .app
        groups = []
        self.target = target
    }

    /// Whether `groups` holds `guid`.
    private mutating func holds(_ guid: String) -> Bool {
        if let lastLookup, lastLookup.guid == guid { return lastLookup.found }
        let found = groups.contains(guid)
        lastLookup = (guid, found)
        return found
    }

    var target: Target {
        get {
            switch follows {
            case .user: .user(uid: uid, memberOf: groups)
            case .groups: .groups(groups)
            case .app: .app
            }
        }
        set {
            switch newValue {
            case .user(let uid, let memberOf):
                follows = .user
                self.uid = uid
                groups = memberOf
            case .groups(let guids):
                follows = .groups
                uid = ""
                groups = guids
            case .app:
                follows = .app
                uid = ""
                groups = []
            }
        }
    }

    /// Whether `action` goes to the subscriber; advances the tracked membership past it.
    mutating func admit(_ action: ActionRecord) -> Bool {
        let matches: Bool
        switch follows {
        case .app:
            matches = true
        case .groups:
            matches = holds(action.group.guid)
        case .user:
            matches = holds(action.group.guid) || action.actionOn?.uid == uid || action.actionBy.uid == uid
            if Self.changesMembership(action, of: uid) { Self.apply(action, for: uid, to: &groups) }
        }
        var visible = true
        if let viewer {
            if action.isPrivate {
                visible = action.isVisible(to: viewer, moderates: moderates.contains(action.group.guid))
            }
            if Self.changesScope(action, of: viewer) { Self.applyScope(action, for: viewer, to: &moderates) }
        }
        return matches && visible && (kinds.isEmpty || kinds.contains(action.kind))
    }

    /// True when `action` may change whether `uid` moderates its group.
    static func changesScope(_ action: ActionRecord, of uid: String) -> Bool {
        switch action.kind {
        case .deleted: true
        case .created, .joined, .added, .inviteAccepted, .joinRequestApproved, .scopeChanged, .ownershipTransferred,
            .left, .kicked, .banned:
            action.actionOn?.uid == uid
        default: false
        }
    }

    /// How `action` changes the set of groups `uid` moderates (moderator, admin or owner).
    static func applyScope(_ action: ActionRecord, for uid: String, to moderates: inout Set<String>) {
        let guid = action.group.guid
        switch action.kind {
        case .deleted, .left, .kicked, .banned:
            moderates.remove(guid)
        case .created, .ownershipTransferred:
            moderates.insert(guid)
        case .joined, .added, .inviteAccepted, .joinRequestApproved, .scopeChanged:
            mark(guid, moderatedWith: action.newScope, in: &moderates)
        default:
            break
        }
    }

    /// The groups `uid` moderated just before `changes` (the actions that may change it, in seq
    /// order), given those after them. A group deleted among them counts as not moderated before
    /// (the log does not say the scope then): a replay across the deletion leaves the group's
    /// private report actions out rather than risk showing them to someone who may not see them.
    static func rewindScopes(_ moderatesAfter: Set<String>, for uid: String, over changes: [ActionRecord])
        -> Set<String>
    {
        var moderates = moderatesAfter
        for action in changes.reversed() {
            let guid = action.group.guid
            switch action.kind {
            case .deleted, .created, .joined, .added, .inviteAccepted, .joinRequestApproved:
                moderates.remove(guid)
            case .scopeChanged, .ownershipTransferred, .left, .kicked, .banned:
                mark(guid, moderatedWith: action.oldScope, in: &moderates)
            default:
                break
            }
        }
        return moderates
    }

    /// `guid` among the groups moderated exactly when `scope` is moderator or above.
    private static func mark(_ guid: String, moderatedWith scope: Scope?, in moderates: inout Set<String>) {
        if scope?.rank.isModeratorOrAbove == true {
            moderates.insert(guid)
        } else {
            moderates.remove(guid)
        }
    }

    /// How `action` changes `uid`'s set of groups.
    static func apply(_ action: ActionRecord, for uid: String, to memberOf: inout Set<String>) {
        let guid = action.group.guid
        let onUser = action.actionOn?.uid == uid
        switch action.kind {
        case .created, .joined, .added, .inviteAccepted, .joinRequestApproved:
            if onUser { memberOf.insert(guid) }
        case .left, .kicked, .banned:
            if onUser { memberOf.remove(guid) }
        case .deleted:
            memberOf.remove(guid)
        case .updated, .unbanned, .scopeChanged, .ownershipTransferred, .muted, .unmuted, .frozen, .unfrozen,
            .userDeleted, .invited, .inviteDeclined, .inviteRevoked, .joinRequested,
            .joinRequestRejected, .joinRequestCancelled, .reported, .reportResolved, .appBanned, .appUnbanned,
            .contentRulesChanged:
            break
        }
    }

    /// True when `action` may change `uid`'s membership (kept for rewinding a replay's start).
    static func changesMembership(_ action: ActionRecord, of uid: String) -> Bool {
        switch action.kind {
        case .created, .joined, .added, .inviteAccepted, .joinRequestApproved, .left, .kicked, .banned:
            action.actionOn?.uid == uid
        case .deleted: true
        case .updated, .unbanned, .scopeChanged, .ownershipTransferred, .muted, .unmuted, .frozen, .unfrozen,
            .userDeleted, .invited, .inviteDeclined, .inviteRevoked, .joinRequested,
            .joinRequestRejected, .joinRequestCancelled, .reported, .reportResolved, .appBanned, .appUnbanned,
            .contentRulesChanged:
            false
        }
    }

    /// `uid`'s groups just before `changes` happened, given the groups just after them.
    ///
    /// `changes` are the actions that may change the membership (in seq order); a deletion is
    /// undone from the latest earlier membership action of the user on that group among
    /// `changes`, or, when there is none, from `memberBefore(guid, seq)` (the log before them).
    static func rewind(
        _ memberOf: Set<String>, for uid: String, over changes: [ActionRecord],
        memberBefore: (String, UInt64) throws(ModerationError) -> Bool
    ) throws(ModerationError) -> Set<String> {
        var groups = memberOf
        for (index, action) in changes.enumerated().reversed() {
            let guid = action.group.guid
            switch action.kind {
            case .created, .joined, .added, .inviteAccepted, .joinRequestApproved:
                groups.remove(guid)
            case .left, .kicked:
                groups.insert(guid)
            case .banned:
                // A pre-emptive ban of a non-member has no scope before it.
                if action.oldScope != nil { groups.insert(guid) } else { groups.remove(guid) }
            case .deleted:
                if let earlier = changes[..<index].last(where: { $0.group.guid == guid }) {
                    var probe: Set<String> = []
                    if earlier.kind != .deleted { apply(earlier, for: uid, to: &probe) }
                    if probe.contains(guid) { groups.insert(guid) } else { groups.remove(guid) }
                } else if try memberBefore(guid, action.seq) {
                    groups.insert(guid)
                } else {
                    groups.remove(guid)
                }
            default:
                break
            }
        }
        return groups
    }
}
