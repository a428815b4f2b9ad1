public import Moderation

/// A group populated with one user of every standing, built the same way for every case of the
/// permission matrix: the owner `o`, admins `a1` `a2`, moderators `m1` `m2`, participants `p1`
/// `p2`, users banned from the group `b1` `b2` (former participants), users who exist but are
/// not members `n1` `n2`, and participants banned from the whole app, `x1` `x2`, or shadow-banned
/// from it, `s1` `s2`.
public enum Roster {
    /// Every user the roster needs.
    public static let users = ["o", "a1", "a2", "m1", "m2", "p1", "p2", "b1", "b2", "n1", "n2", "x1", "x2", "s1", "s2"]

    /// Who acts, by standing. The last two are participants banned from the app, for good or in
    /// the shadow: the matrix's columns are the first seven.
    public enum Actor: String, CaseIterable, Sendable, CustomStringConvertible {
        case owner, admin, moderator, participant, nonMember, banned, app, appBanned, shadowBanned

        /// The acting uid (nil for the app).
        public var uid: String? {
            switch self {
            case .owner: "o"
            case .admin: "a1"
            case .moderator: "m1"
            case .participant: "p1"
            case .nonMember: "n1"
            case .banned: "b1"
            case .app: nil
            case .appBanned: "x1"
            case .shadowBanned: "s1"
            }
        }

        public var description: String { rawValue }
    }

    /// Whom the action targets, by standing ("self" is the actor). The last two are participants
    /// banned from the app, for good or in the shadow: the matrix's columns are the first seven.
    public enum Target: String, CaseIterable, Sendable, CustomStringConvertible {
        case owner, admin, moderator, participant, nonMember, banned, `self`, appBanned, shadowBanned

        /// The target uid for `actor` (nil: no self for the app).
        public func uid(for actor: Actor) -> String? {
            switch self {
            case .owner: "o"
            case .admin: "a2"
            case .moderator: "m2"
            case .participant: "p2"
            case .nonMember: "n2"
            case .banned: "b2"
            case .self: actor.uid
            case .appBanned: "x2"
            case .shadowBanned: "s2"
            }
        }

        public var description: String { rawValue }
    }

    /// Creates the users (once per harness), and bans `x1` and `x2` from the app, `s1` and `s2` in
    /// the shadow.
    public static func createUsers(_ harness: ServiceHarness, app: String = "app") throws {
        let client = harness.client(app: app)
        for uid in users { try client.createUser(uid) }
        for uid in ["x1", "x2"] { try client.banFromApp(uid, reason: "roster") }
        for uid in ["s1", "s2"] { try client.banFromApp(uid, reason: "roster", shadow: true) }
    }

    /// Creates group `guid` of `type` with the roster's members and bans.
    public static func createGroup(_ harness: ServiceHarness, guid: String, type: GroupType, app: String = "app") throws
    {
        let client = harness.client(app: app)
        let members: [MemberGrant] = [
            MemberGrant(uid: "a1", scope: .admin), MemberGrant(uid: "a2", scope: .admin),
            MemberGrant(uid: "m1", scope: .moderator), MemberGrant(uid: "m2", scope: .moderator),
            MemberGrant(uid: "p1"), MemberGrant(uid: "p2"), MemberGrant(uid: "b1"), MemberGrant(uid: "b2"),
            MemberGrant(uid: "x1"), MemberGrant(uid: "x2"), MemberGrant(uid: "s1"), MemberGrant(uid: "s2"),
        ]
        try client.createGroup(
            guid, type: type, password: type == .password ? "secret" : "", owner: "o", members: members)
        let banned = try client.bulkBan(guid, ["b1", "b2"], reason: "roster")
        precondition(banned.values.allSatisfy(\.changed), "roster bans failed: \(banned)")
    }
}
