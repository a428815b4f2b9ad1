public import ModerationMessages

/// The state of an app rebuilt from its action log alone, in seq order: which groups exist, who
/// owns them, who is a member with which scope, who is banned or muted, which groups are
/// frozen, who is banned from the app — what a client replaying the
/// event stream would believe. Tests compare it with the state read through the API, and use it
/// to say who a user subscription must deliver each action to.
public struct LogModel: Sendable {
    public struct GroupState: Sendable, Equatable {
        public var owner: String
        public var members: [String: Scope]
        public var banned: Set<String>
        /// Members muted (until an `unmuted`, or until they leave).
        public var muted: Set<String>
        public var frozen: Bool
        /// Users invited (until the invite is accepted, declined, revoked, or they join, are
        /// added or banned; an invite's expiry records no action, so the model keeps it).
        public var invited: Set<String>
        /// Users with a pending join request (until approved, rejected, cancelled, or they join,
        /// are added or banned).
        public var requesting: Set<String>

        public init(
            owner: String, members: [String: Scope], banned: Set<String>, muted: Set<String> = [], frozen: Bool = false,
            invited: Set<String> = [], requesting: Set<String> = []
        ) {
            self.owner = owner
            self.members = members
            self.banned = banned
            self.muted = muted
            self.frozen = frozen
            self.invited = invited
            self.requesting = requesting
        }
    }

    public private(set) var groups: [String: GroupState] = [:]
    /// Users banned from the app (until an `appUnbanned`), each with whether it is a shadow ban.
    public private(set) var appBanned: [String: Bool] = [:]
    /// Seqs applied, in order.
    public private(set) var seqs: [UInt64] = []
    /// Actions that contradicted the model (e.g. a kick of someone who was not a member).
    public private(set) var contradictions: [String] = []

    public init() {}

    /// Whether `uid` is a member of `guid` now (in the model).
    public func isMember(_ uid: String, of guid: String) -> Bool {
        groups[guid]?.members[uid] != nil
    }

    /// Whether a subscription for `uid` delivers `action`, given the model just before it: the
    /// action is in a group `uid` belongs to, or `uid` is its target or its actor (SERVICE.md).
    public func delivers(_ action: Action, to uid: String) -> Bool {
        let guid = action.actionFor?.guid ?? ""
        return isMember(uid, of: guid) || action.actionOn?.uid == uid || action.actionBy?.uid == uid
    }

    /// Applies one action.
    public mutating func apply(_ action: Action) {
        seqs.append(action.seq)
        let guid = action.actionFor?.guid ?? ""
        let target = action.actionOn?.uid ?? ""
        func note(_ what: String) {
            contradictions.append("seq \(action.seq) \(action.action) \(guid) \(target): \(what)")
        }
        if action.action == .appBanned || action.action == .appUnbanned {
            if action.actionFor != nil { note("an action of the whole app shows a group") }
            if action.action == .appBanned {
                if appBanned.updateValue(action.shadow, forKey: target) != nil { note("already banned from the app") }
            } else if appBanned.removeValue(forKey: target) != action.shadow {
                note("not banned from the app, or banned otherwise")
            }
            return
        }
        if action.action == .contentRulesChanged && action.actionFor == nil {
            return // the app's own set: no group
        }
        if action.action != .created && groups[guid] == nil {
            note("no such group")
            return
        }
        switch action.action {
        case .created:
            if groups[guid] != nil { note("the group exists already") }
            groups[guid] = GroupState(owner: target, members: [target: .admin], banned: [])
        case .deleted:
            groups[guid] = nil
        case .joined, .added:
            if groups[guid]?.members[target] != nil { note("already a member") }
            if groups[guid]?.banned.contains(target) == true { note("banned") }
            groups[guid]?.members[target] = action.newScope == .unspecified ? .participant : action.newScope
            groups[guid]?.invited.remove(target)
            groups[guid]?.requesting.remove(target)
        case .invited:
            if groups[guid]?.members[target] != nil { note("invited but a member") }
            if groups[guid]?.banned.contains(target) == true { note("invited but banned") }
            groups[guid]?.invited.insert(target)
        case .inviteAccepted:
            if groups[guid]?.invited.remove(target) == nil { note("accepted but not invited") }
            if groups[guid]?.members[target] != nil { note("already a member") }
            if groups[guid]?.banned.contains(target) == true { note("banned") }
            groups[guid]?.members[target] = action.newScope
            groups[guid]?.requesting.remove(target)
        case .joinRequested:
            if groups[guid]?.members[target] != nil { note("requested but a member") }
            if groups[guid]?.banned.contains(target) == true { note("requested but banned") }
            if groups[guid]?.requesting.insert(target).inserted == false { note("already requesting") }
        case .joinRequestApproved:
            if groups[guid]?.requesting.remove(target) == nil { note("approved but not requesting") }
            if groups[guid]?.members[target] != nil { note("already a member") }
            if groups[guid]?.banned.contains(target) == true { note("banned") }
            groups[guid]?.members[target] = .participant
            groups[guid]?.invited.remove(target)
        case .joinRequestRejected, .joinRequestCancelled:
            if groups[guid]?.requesting.remove(target) == nil { note("not requesting") }
        case .inviteDeclined, .inviteRevoked:
            if groups[guid]?.invited.remove(target) == nil { note("not invited") }
        case .left, .kicked:
            if groups[guid]?.members.removeValue(forKey: target) == nil { note("not a member") }
            groups[guid]?.muted.remove(target)
        case .banned:
            groups[guid]?.members[target] = nil
            groups[guid]?.muted.remove(target)
            groups[guid]?.invited.remove(target)
            groups[guid]?.requesting.remove(target)
            if groups[guid]?.banned.insert(target).inserted == false { note("already banned") }
        case .unbanned:
            if groups[guid]?.banned.remove(target) == nil { note("not banned") }
        case .scopeChanged:
            if groups[guid]?.members[target] != action.oldScope {
                note("old scope \(action.oldScope) is not the member's")
            }
            groups[guid]?.members[target] = action.newScope
        case .ownershipTransferred:
            if groups[guid]?.members[target] == nil { note("the new owner is not a member") }
            if groups[guid]?.muted.contains(target) == true { note("the new owner is muted") }
            groups[guid]?.owner = target
            groups[guid]?.members[target] = .admin
        case .muted:
            if groups[guid]?.members[target] == nil { note("muted but not a member") }
            if groups[guid]?.owner == target { note("the owner muted") }
            if groups[guid]?.muted.insert(target).inserted == false { note("already muted") }
        case .unmuted:
            if groups[guid]?.muted.remove(target) == nil { note("not muted") }
        case .frozen:
            if groups[guid]?.frozen == true { note("already frozen") }
            groups[guid]?.frozen = true
        case .unfrozen:
            if groups[guid]?.frozen == false { note("not frozen") }
            groups[guid]?.frozen = false
        case .userDeleted:
            if groups[guid]?.banned.remove(target) == nil { note("a deleted user's dropped ban, but not banned") }
        case .updated, .reported, .reportResolved, .appBanned, .appUnbanned, .contentRulesChanged, .unspecified,
            .unrecognized:
            break
        }
        if let group = groups[guid], let count = action.actionFor?.membersCount, Int(count) != group.members.count {
            note("members_count \(count) but the model has \(group.members.count)")
        }
    }

    /// Applies actions in order.
    public mutating func apply(_ actions: [Action]) {
        for action in actions { apply(action) }
    }
}
