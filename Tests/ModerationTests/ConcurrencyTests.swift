import Moderation
import SeededRandom
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// Many threads issuing random mutations on a few groups. Afterwards the log's seqs are gapless,
/// the listener saw exactly the log, replaying the log in seq order rebuilds the current state,
/// and every group holds its invariants.
@Suite("Concurrency", .onEveryStore)
struct ConcurrencyTests {
    struct GroupState: Equatable {
        var owner = ""
        var members: [String: Scope] = [:]
        var bans: Set<String> = []
    }

    @Test func randomMutationsReplayToTheSameState() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let batches = Mutex<[[ActionRecord]]>([])
        harness.service.addCommitListener { actions in batches.withLock { $0.append(actions) } }
        let app = harness.client()
        let users = (0..<24).map { "u\($0)" }
        for uid in users { try app.createUser(uid) }
        let guids = ["g0", "g1", "g2"]
        for (index, guid) in guids.enumerated() {
            try app.createGroup(
                guid, owner: users[index], members: users[3..<10].map { MemberGrant(uid: $0, scope: .moderator) })
        }
        let threads = (0..<6).map { thread in
            WorkerThread(name: "random") {
                var random = SplitMix64(seed: UInt64(thread) &+ 77)
                for _ in 0..<250 {
                    let guid = guids[Int(random.next() % 3)]
                    let actor = users[Int(random.next() % UInt64(users.count))]
                    let target = users[Int(random.next() % UInt64(users.count))]
                    let client = random.next() % 10 == 0 ? harness.client() : harness.client(actor)
                    switch random.next() % 9 {
                    case 0: _ = try? client.join(guid)
                    case 1: _ = try? client.leave(guid)
                    case 2: _ = try? client.kick(guid, target)
                    case 3: _ = try? client.ban(guid, target)
                    case 4: _ = try? client.unban(guid, target)
                    case 5:
                        _ = try? client.changeScope(
                            guid, target, to: [.admin, .moderator, .participant][Int(random.next() % 3)])
                    case 6:
                        _ = try? client.addMembers(
                            guid, [MemberGrant(uid: target, scope: random.next() % 2 == 0 ? .moderator : .participant)])
                    case 7: _ = try? client.transfer(guid, to: target)
                    default:
                        _ = try? client.bulkKick(
                            guid, Array(Set([target, users[Int(random.next() % UInt64(users.count))]])))
                    }
                }
            }
        }
        for thread in threads { thread.join() }

        let log = try harness.service.withActionLog(app: "app") {
            (log: ActionLogSnapshot) throws(ModerationError) -> [ActionRecord] in
            var all: [ActionRecord] = []
            while true {
                let page = try log.actions(afterSeq: all.last?.seq ?? 0, limit: 500)
                if page.isEmpty { return all }
                all += page
            }
        }
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "seqs are 1...n without a gap")
        #expect(batches.withLock { $0.flatMap { $0 } } == log, "the listener saw exactly the log, in order")
        // How many of the 1 500 random calls succeed depends on how the threads interleave (one
        // run on a loaded machine recorded exactly 200 actions): well over the set-up's is enough.
        #expect(log.count > 100, "the random mutations changed things (\(log.count) actions)")

        var replayed: [String: GroupState] = [:]
        for action in log {
            let guid = action.group.guid
            let target = action.actionOn?.uid ?? ""
            var state = replayed[guid] ?? GroupState()
            switch action.kind {
            case .created:
                state = GroupState(owner: target, members: [target: .admin])
            case .added, .joined, .scopeChanged, .inviteAccepted, .joinRequestApproved:
                state.members[target] = action.newScope
            case .left, .kicked:
                state.members[target] = nil
            case .banned:
                state.members[target] = nil
                state.bans.insert(target)
            case .unbanned:
                state.bans.remove(target)
            case .ownershipTransferred:
                state.owner = target
                state.members[target] = .admin
            case .userDeleted:
                state.bans.remove(target)
            case .updated, .deleted, .muted, .unmuted, .frozen, .unfrozen, .invited, .inviteDeclined, .inviteRevoked,
                .joinRequested, .joinRequestRejected, .joinRequestCancelled, .reported, .reportResolved,
                .contentRulesChanged:
                break
            case .appBanned, .appUnbanned:
                continue // the whole app's, in no group
            }
            #expect(action.group.membersCount == state.members.count, "seq \(action.seq): members_count")
            #expect(action.group.owner == state.owner, "seq \(action.seq): owner")
            replayed[guid] = state
        }
        for guid in guids {
            let members = try app.listMembers(guid, ListMembersOptions(limit: 100)).items
            let bans = try app.listBanned(guid, ListBannedOptions(limit: 100)).items
            let actual = GroupState(
                owner: try app.getGroup(guid).group.owner,
                members: Dictionary(uniqueKeysWithValues: members.map { ($0.uid, $0.scope) }),
                bans: Set(bans.map(\.uid)))
            #expect(replayed[guid] == actual, "\(guid): the log replays to the current state")
            #expect(
                Invariants.violations(service: harness.service, store: harness.store, app: "app", guid: guid).isEmpty)
        }
    }
}
