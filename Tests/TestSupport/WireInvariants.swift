import ModerationMessages
import RPCCore

/// The invariants of SERVICE.md checked through the API as the app sees a group: exactly one
/// owner, a member with scope admin; nobody both member and banned; members_count equal to the
/// number of members listed.
public enum WireInvariants {
    /// The broken invariants of group `guid`; empty when it holds them all or does not exist.
    public static func violations(_ app: ModerationWireClient, guid: String) -> [String] {
        let group: Group
        do {
            group = try app.getGroup(guid)
        } catch {
            return error.errorCode == "ERR_GROUP_NOT_FOUND" ? [] : ["cannot read group \(guid): \(error)"]
        }
        let members: [GroupMember]
        let banned: [BannedMember]
        do {
            members = try app.allMembers(guid)
            banned = try app.allBanned(guid)
        } catch {
            return ["cannot list group \(guid): \(error)"]
        }
        var problems: [String] = []
        if Int(group.membersCount) != members.count {
            problems.append("\(guid): members_count \(group.membersCount) but \(members.count) members listed")
        }
        if Set(members.map(\.uid)).count != members.count { problems.append("\(guid): a member is listed twice") }
        let owners = members.filter { $0.uid == group.owner }
        if owners.count != 1 {
            problems.append("\(guid): owner \(group.owner) is listed \(owners.count) times among the members")
        }
        if let owner = owners.first, owner.scope != .admin {
            problems.append("\(guid): owner \(owner.uid) has scope \(owner.scope)")
        }
        let both = Set(members.map(\.uid)).intersection(banned.map(\.uid))
        if !both.isEmpty { problems.append("\(guid): both member and banned: \(both.sorted())") }
        return problems
    }
}
