public import Moderation
import Testing

/// Reads a whole group in one snapshot of the store and reports every broken invariant of
/// SERVICE.md: exactly one owner; the owner a member with scope admin; nobody both member and
/// banned (not even by an expired ban row); members_count equal to the members.
public enum Invariants {
    /// The broken invariants of group `guid` of `app`; empty when it holds them all (or the
    /// group does not exist).
    public static func violations(
        service: ModerationService? = nil, store: some ModerationStore, app: String, guid: String
    ) -> [String] {
        do {
            return try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> [String] in
                guard let appID = try snapshot.appID(named: app),
                    let stored = try snapshot.group(appID: appID, guid: guid)
                else { return [] }
                var members: [Member] = []
                var after: MemberKey? = nil
                repeat {
                    let page = try snapshot.members(
                        groupID: stored.id, query: MemberPageQuery(after: after, limit: 500))
                    members += page
                    after = page.count == 500 ? page.last.map { MemberKey(joinedAt: $0.joinedAt, uid: $0.uid) } : nil
                } while after != nil
                let group = stored.group
                var problems: [String] = []
                if group.membersCount != members.count {
                    problems.append("\(guid): members_count \(group.membersCount) but \(members.count) members")
                }
                if Set(members.map(\.uid)).count != members.count {
                    problems.append("\(guid): a member is listed twice")
                }
                let owners = members.filter { $0.uid == group.owner }
                if owners.count != 1 { problems.append("\(guid): owner \(group.owner) is not exactly one member") }
                if let owner = owners.first, owner.scope != .admin {
                    problems.append("\(guid): the owner has scope \(owner.scope)")
                }
                for member in members where try snapshot.ban(groupID: stored.id, uid: member.uid) != nil {
                    problems.append("\(guid): member \(member.uid) has a ban row")
                }
                return problems
            }
        } catch {
            return ["\(guid): cannot read the group: \(error)"]
        }
    }

    /// Records a test issue for every broken invariant of the group.
    public static func expectHeld(store: some ModerationStore, app: String, guid: String, after what: String) {
        for problem in violations(store: store, app: app, guid: guid) {
            Issue.record("after \(what): \(problem)")
        }
    }
}
