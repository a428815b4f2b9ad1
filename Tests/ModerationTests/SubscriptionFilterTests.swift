import Moderation
import Testing

@testable import ModerationEvents

/// The filter that decides, per subscriber, which actions it gets: membership followed as the
/// log goes by, and its one-entry lookup of the last group asked about kept true across changes.
@Suite("SubscriptionFilter: who gets which action, membership followed action by action")
struct SubscriptionFilterTests {
    static func action(_ kind: ActionKind, on uid: String, in guid: String, by actor: String = "owner") -> ActionRecord
    {
        ActionRecord(
            app: "app", kind: kind, actionBy: User(uid: actor), actionOn: User(uid: uid),
            group: Group(guid: guid, name: guid, type: .public, owner: "owner"), timestamp: 0)
    }

    /// (action, delivered to carol's user subscription?), in log order.
    static let carolsLog: [(ActionRecord, Bool)] = [
        (action(.updated, on: "dave", in: "g"), false), // not a member of g
        (action(.updated, on: "dave", in: "g"), false), // asked again: the same answer
        (action(.joined, on: "carol", in: "g"), true), // her own join (its target)
        (action(.updated, on: "dave", in: "g"), true), // now a member: the lookup must know
        (action(.updated, on: "dave", in: "h"), false),
        (action(.kicked, on: "carol", in: "g"), true), // her own kick
        (action(.updated, on: "dave", in: "g"), false), // gone again
        (action(.added, on: "carol", in: "g", by: "alice"), true),
        (action(.updated, on: "dave", in: "g"), true),
        (action(.deleted, on: "dave", in: "g"), true), // the group's end reaches its members
        (action(.updated, on: "dave", in: "g"), false),
    ]

    @Test("a user subscription gets its groups' actions while it belongs, and those done to it")
    func userMembershipFollowed() {
        var filter = SubscriptionFilter(target: .user(uid: "carol", memberOf: []), kinds: [])
        for (index, (action, expected)) in Self.carolsLog.enumerated() {
            let admitted = filter.admit(action)
            #expect(admitted == expected, "action \(index): \(action.kind) in \(action.group.guid)")
        }
        guard case .user(_, let memberOf) = filter.target else {
            Issue.record("the target changed kind")
            return
        }
        #expect(memberOf.isEmpty)
    }

    @Test("a group subscription gets exactly its groups' actions; kinds filter on top")
    func groupsAndKinds() {
        var groups = SubscriptionFilter(target: .groups(["g", "k"]), kinds: [])
        let answers = ["g", "g", "h", "k"].map { groups.admit(Self.action(.updated, on: "x", in: $0)) }
        #expect(answers == [true, true, false, true])
        var kicks = SubscriptionFilter(target: .app, kinds: [.kicked])
        let kinds = [ActionKind.updated, .kicked].map { kicks.admit(Self.action($0, on: "x", in: "g")) }
        #expect(kinds == [false, true])
    }

    @Test("setting the target anew (a user's groups read at start) is what the next lookup sees")
    func targetReplaced() {
        var filter = SubscriptionFilter(target: .user(uid: "carol", memberOf: []), kinds: [])
        let before = filter.admit(Self.action(.updated, on: "dave", in: "g"))
        filter.target = .user(uid: "carol", memberOf: ["g"])
        let after = filter.admit(Self.action(.updated, on: "dave", in: "g"))
        #expect(!before && after)
    }
}
