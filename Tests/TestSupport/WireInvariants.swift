import ModerationMessages
import RPCCore

/// The invariants of docs/SERVICE.md checked through the API as the app sees a group:
/// exactly one owner, a member with scope admin, never muted; nobody both member and banned;
/// nobody muted who is not a member (the muted-only list names listed members, exactly those
/// shown muted); members_count equal to the number of members listed; nobody both invited and a
/// member, nor invited and banned; nobody both requesting to join and a member, nor requesting
/// and banned.
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
        let muted: [GroupMember]
        let banned: [BannedMember]
        var invited: [String] = []
        var requesting: [String] = []
        do {
            members = try app.allMembers(guid)
            muted = try app.allMembers(guid, mutedOnly: true)
            banned = try app.allBanned(guid)
            var page = try app.invites(guid, limit: 100)
            invited += page.invites.map(\.uid)
            while !page.nextCursor.isEmpty {
                page = try app.invites(guid, limit: 100, cursor: page.nextCursor)
                invited += page.invites.map(\.uid)
            }
            var requests = try app.joinRequests(guid, limit: 100)
            requesting += requests.joinRequests.map(\.uid)
            while !requests.nextCursor.isEmpty {
                requests = try app.joinRequests(guid, limit: 100, cursor: requests.nextCursor)
                requesting += requests.joinRequests.map(\.uid)
            }
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
        let invitedMembers = Set(invited).intersection(members.map(\.uid))
        if !invitedMembers.isEmpty { problems.append("\(guid): both invited and member: \(invitedMembers.sorted())") }
        let invitedBanned = Set(invited).intersection(banned.map(\.uid))
        if !invitedBanned.isEmpty { problems.append("\(guid): both invited and banned: \(invitedBanned.sorted())") }
        let requestingMembers = Set(requesting).intersection(members.map(\.uid))
        if !requestingMembers.isEmpty {
            problems.append("\(guid): both requesting and member: \(requestingMembers.sorted())")
        }
        let requestingBanned = Set(requesting).intersection(banned.map(\.uid))
        if !requestingBanned.isEmpty {
            problems.append("\(guid): both requesting and banned: \(requestingBanned.sorted())")
        }
        if let owner = owners.first, owner.mutedUntil != 0 {
            problems.append("\(guid): owner \(owner.uid) is muted until \(owner.mutedUntil)")
        }
        // Read in separate calls: a mute that expired in between may show in one list only.
        let outsiders = Set(muted.map(\.uid)).subtracting(members.map(\.uid))
        if !outsiders.isEmpty { problems.append("\(guid): muted but not members: \(outsiders.sorted())") }
        let shownMuted = Set(members.filter { $0.mutedUntil != 0 }.map(\.uid))
        if !Set(muted.map(\.uid)).isSubset(of: shownMuted) {
            problems.append("\(guid): the muted-only list names members the full list shows unmuted")
        }
        return problems
    }
}
