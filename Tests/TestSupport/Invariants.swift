public import Moderation

/// Reads a whole group through the service (as the app) and the store, and reports every broken
/// invariant of SERVICE.md: exactly one owner; the owner a member with scope admin; nobody both
/// member and banned (not even by an expired ban row); members_count equal to the members.
public enum Invariants {
    /// The broken invariants of group `guid` of `app`; empty when it holds them all (or the
    /// group does not exist).
    public static func violations(service: ModerationService, store: some ModerationStore, app: String, guid: String) -> [String] {
        let client = ModerationClient(service: service, caller: Caller(app: app))
        let group: GroupView
        do {
            group = try client.getGroup(guid)
        } catch {
            return error.code == .groupNotFound ? [] : ["cannot read group \(guid): \(error)"]
        }
        var members: [Member] = []
        var cursor = ""
        repeat {
            guard let page = try? client.listMembers(guid, ListMembersOptions(limit: 100, cursor: cursor)) else {
                return ["cannot list the members of \(guid)"]
            }
            members += page.items
            cursor = page.nextCursor
        } while !cursor.isEmpty
        var problems: [String] = []
        if group.group.membersCount != members.count {
            problems.append("\(guid): members_count \(group.group.membersCount) but \(members.count) members")
        }
        if Set(members.map(\.uid)).count != members.count { problems.append("\(guid): a member is listed twice") }
        let owners = members.filter { $0.uid == group.group.owner }
        if owners.count != 1 { problems.append("\(guid): owner \(group.group.owner) is not exactly one member") }
        if let owner = owners.first, owner.scope != .admin { problems.append("\(guid): owner has scope \(owner.scope)") }
        let banned: [String]? = try? store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> [String] in
            guard let appID = try snapshot.appID(named: app), let stored = try snapshot.group(appID: appID, guid: guid) else { return [] }
            var both: [String] = []
            for member in members where try snapshot.ban(groupID: stored.id, uid: member.uid) != nil { both.append(member.uid) }
            return both
        }
        if let banned, !banned.isEmpty { problems.append("\(guid): members with a ban row: \(banned)") }
        if banned == nil { problems.append("\(guid): cannot read bans") }
        return problems
    }
}
