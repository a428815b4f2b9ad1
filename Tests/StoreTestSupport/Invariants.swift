public import Moderation
import Testing

/// Reads a whole group in one snapshot of the store and reports every broken invariant of
/// docs/SERVICE.md: exactly one owner; the owner a member with scope admin, never
/// muted; nobody both member and banned (not even by an expired ban row); nobody muted who is not
/// a member (the store's muted-members list names members only, and exactly the members whose row
/// holds a mute); members_count equal to the members; nobody both invited and a member, nor
/// invited and banned (not even by an expired invite row); nobody both requesting to join and a
/// member, nor requesting and banned.
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
                if let owner = owners.first, owner.mute != nil {
                    problems.append("\(guid): the owner \(owner.uid) is muted")
                }
                for member in members {
                    let membership = try snapshot.membership(groupID: stored.id, uid: member.uid)
                    if membership?.mute != member.mute {
                        problems.append("\(guid): \(member.uid)'s mute differs between the list and the row")
                    }
                    if let mute = member.mute, mute.expiresAt < 0 {
                        problems.append("\(guid): \(member.uid)'s mute has expiry \(mute.expiresAt)")
                    }
                }
                // Every mute ever stored, expired or not, applies at time 1.
                var muted: [Member] = []
                after = nil
                repeat {
                    let page = try snapshot.members(
                        groupID: stored.id, query: MemberPageQuery(after: after, limit: 500, mutedAt: 1))
                    muted += page
                    after = page.count == 500 ? page.last.map { MemberKey(joinedAt: $0.joinedAt, uid: $0.uid) } : nil
                } while after != nil
                let memberUIDs = Set(members.map(\.uid))
                for outsider in muted where !memberUIDs.contains(outsider.uid) {
                    problems.append("\(guid): \(outsider.uid) is muted but not a member")
                }
                if Set(muted.map(\.uid)) != Set(members.filter { $0.mute != nil }.map(\.uid)) {
                    problems.append("\(guid): the muted-members list is not the members whose row holds a mute")
                }
                // Every invite row, expired or not.
                var invites: [Invite] = []
                var afterInvite: InviteKey? = nil
                repeat {
                    let page = try snapshot.invites(
                        groupID: stored.id, query: InvitePageQuery(after: afterInvite, limit: 500, liveAt: Int64.min))
                    invites += page
                    afterInvite =
                        page.count == 500 ? page.last.map { InviteKey(invitedAt: $0.invitedAt, id: $0.uid) } : nil
                } while afterInvite != nil
                for invite in invites {
                    if memberUIDs.contains(invite.uid) {
                        problems.append("\(guid): \(invite.uid) is invited and a member")
                    }
                    if try snapshot.ban(groupID: stored.id, uid: invite.uid) != nil {
                        problems.append("\(guid): \(invite.uid) is invited and has a ban row")
                    }
                }
                var requests: [JoinRequest] = []
                var afterRequest: MemberKey? = nil
                repeat {
                    let page = try snapshot.joinRequests(
                        groupID: stored.id, query: JoinRequestPageQuery(after: afterRequest, limit: 500))
                    requests += page
                    afterRequest =
                        page.count == 500 ? page.last.map { MemberKey(joinedAt: $0.requestedAt, uid: $0.uid) } : nil
                } while afterRequest != nil
                if try snapshot.pendingJoinRequestCount(groupID: stored.id) != requests.count {
                    problems.append("\(guid): the pending count is not the listed join requests")
                }
                for request in requests {
                    if memberUIDs.contains(request.uid) {
                        problems.append("\(guid): \(request.uid) is requesting and a member")
                    }
                    if try snapshot.ban(groupID: stored.id, uid: request.uid) != nil {
                        problems.append("\(guid): \(request.uid) is requesting and has a ban row")
                    }
                }
                for member in members where try snapshot.invite(groupID: stored.id, uid: member.uid) != nil {
                    problems.append("\(guid): member \(member.uid) has an invite row")
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
