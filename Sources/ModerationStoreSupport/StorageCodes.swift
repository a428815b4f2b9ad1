public import Moderation

/// How enums are stored, by both stores: the numbers of their proto enums, so a row reads the same
/// in `sqlite3` or `psql` as on the wire.
public enum StorageCodes {
    public static func code(_ scope: Scope) -> Int {
        switch scope {
        case .admin: 1
        case .moderator: 2
        case .participant: 3
        }
    }

    public static func scope(_ code: Int) -> Scope? {
        switch code {
        case 1: .admin
        case 2: .moderator
        case 3: .participant
        default: nil
        }
    }

    public static func code(_ type: GroupType) -> Int {
        switch type {
        case .public: 1
        case .password: 2
        case .private: 3
        }
    }

    public static func groupType(_ code: Int) -> GroupType {
        switch code {
        case 2: .password
        case 3: .private
        default: .public
        }
    }

    /// In the order of the proto's `ActionType` numbers (1…): a kind's code is its number.
    private static let kinds: [ActionKind] = [
        .created, .updated, .deleted, .joined, .left, .added, .kicked, .banned, .unbanned, .scopeChanged,
        .ownershipTransferred, .muted, .unmuted, .frozen, .unfrozen, .userDeleted, .invited, .inviteAccepted,
        .inviteDeclined, .inviteRevoked, .joinRequested, .joinRequestApproved, .joinRequestRejected,
        .joinRequestCancelled, .reported, .reportResolved, .appBanned, .appUnbanned, .contentRulesChanged,
    ]

    /// A content rule's kind as stored: its proto number.
    public static func code(_ kind: ContentRuleKind) -> Int {
        switch kind {
        case .word: 1
        case .regex: 2
        case .domain: 3
        }
    }

    public static func contentRuleKind(_ code: Int) -> ContentRuleKind {
        switch code {
        case 2: .regex
        case 3: .domain
        default: .word
        }
    }

    /// A content rule's action as stored: its proto number.
    public static func code(_ action: ContentAction) -> Int { action == .block ? 1 : 2 }

    public static func contentAction(_ code: Int) -> ContentAction { code == 2 ? .flag : .block }

    public static func code(_ kind: ActionKind) -> Int { kinds.firstIndex(of: kind)! + 1 }

    public static func kind(_ code: Int) -> ActionKind { kinds.indices.contains(code - 1) ? kinds[code - 1] : .updated }

    /// A report's category: the proto `ReportCategory` number.
    public static func code(_ category: Report.Category) -> Int {
        switch category {
        case .spam: 1
        case .harassment: 2
        case .hate: 3
        case .violence: 4
        case .other: 5
        }
    }

    public static func reportCategory(_ code: Int) -> Report.Category {
        switch code {
        case 1: .spam
        case 2: .harassment
        case 3: .hate
        case 4: .violence
        default: .other
        }
    }

    /// A report's resolution: the proto `ReportResolution` number (0: open).
    public static func code(_ resolution: Report.Resolution) -> Int {
        switch resolution {
        case .dismissed: 1
        case .actioned: 2
        }
    }

    public static func reportResolution(_ code: Int) -> Report.Resolution? {
        switch code {
        case 1: .dismissed
        case 2: .actioned
        default: nil
        }
    }

    /// A mute as the `muted_until` column keeps it: the wire's `muted_until` (0 not muted, -1
    /// until unmuted, else the expiry).
    public static func mutedUntil(_ mute: Mute?) -> Int64 { mute?.mutedUntil ?? 0 }

    /// The mute of a member row from its `muted_until` and `mute_reason` columns.
    public static func mute(mutedUntil: Int64, reason: String) -> Mute? {
        switch mutedUntil {
        case 0: nil
        case Mute.untilUnmuted: Mute(expiresAt: 0, reason: reason)
        default: Mute(expiresAt: mutedUntil, reason: reason)
        }
    }

    /// A bit mask of kinds for `((1 << kind) & mask) != 0`; every kind when `kinds` is empty.
    public static func mask(_ kinds: Set<ActionKind>) -> Int64 {
        let chosen = kinds.isEmpty ? Set(ActionKind.allCases) : kinds
        return chosen.reduce(0) { $0 | (1 << Int64(code($1))) }
    }

    public static func mask(_ scopes: Set<Scope>) -> Int64 {
        let chosen = scopes.isEmpty ? Set(Scope.allCases) : scopes
        return chosen.reduce(0) { $0 | (1 << Int64(code($1))) }
    }

    public static func mask(_ types: Set<GroupType>) -> Int64 {
        let chosen = types.isEmpty ? Set(GroupType.allCases) : types
        return chosen.reduce(0) { $0 | (1 << Int64(code($1))) }
    }
}
