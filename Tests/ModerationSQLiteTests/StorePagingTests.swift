import Moderation
import ModerationSQLite
import StoreTestSupport
import TestSupport
import Testing

/// Keyset pages straight from the store: ties on the sort key are broken by uid, and the
/// position after a page is exact whatever was inserted or deleted around it.
@Suite("Store paging")
struct StorePagingTests {
    @Test("members and bans sharing a timestamp page by uid, without repeats or gaps")
    func ties() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try ServiceHarness(clock: clock, backend: .sqlite)
        defer { harness.tearDown() }
        let app = harness.client()
        let uids = (0..<23).map { "u\($0)" }
        for uid in ["o", "x"] + uids { try app.createUser(uid) }
        try app.createGroup("g", owner: "o", members: uids.map { MemberGrant(uid: $0) }) // all joined at the same ms
        try app.bulkBan("g", Array(uids.prefix(11))) // banned at the same ms
        clock.advance(by: 5)
        try app.ban("g", "x") // the newest ban
        let store = harness.store
        let pages = try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> ([String], [String]) in
            guard let appID = try snapshot.appID(named: "app"), let group = try snapshot.group(appID: appID, guid: "g")
            else {
                throw ModerationError(.groupNotFound, "g")
            }
            var members: [String] = []
            var memberKey: MemberKey? = nil
            repeat {
                let page = try snapshot.members(groupID: group.id, query: MemberPageQuery(after: memberKey, limit: 4))
                members += page.map(\.uid)
                memberKey = page.count == 4 ? page.last.map { MemberKey(joinedAt: $0.joinedAt, uid: $0.uid) } : nil
            } while memberKey != nil
            var bans: [String] = []
            var banKey: BanKey? = nil
            repeat {
                let page = try snapshot.bans(
                    groupID: group.id, query: BanPageQuery(after: banKey, limit: 3, activeAt: clock.peek))
                bans += page.map(\.uid)
                banKey = page.count == 3 ? page.last.map { BanKey(bannedAt: $0.bannedAt, uid: $0.uid) } : nil
            } while banKey != nil
            return (members, bans)
        }
        let remaining = ["o"] + uids.dropFirst(11)
        #expect(pages.0 == remaining.sorted(), "joined at the same time: by uid")
        #expect(pages.1 == ["x"] + uids.prefix(11).sorted(), "newest first, then by uid")
    }
}
