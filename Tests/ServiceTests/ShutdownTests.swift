import ModerationMessages
import RPCCore
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// A graceful shutdown ends every event stream with UNAVAILABLE and the seq to resume from; after
    /// a restart on the same data, resuming there misses nothing and repeats nothing.
    @Suite("Graceful shutdown", .onEveryStore)
    struct ShutdownTests {
        @Test("streams end with UNAVAILABLE and last_seq; resuming after a restart continues exactly")
        func streamsEndWithLastSeq() throws {
            let cast = try Cast()
            let directory = cast.server.directory
            defer { directory.remove() }
            let start = cast.headSeq
            let carol = cast.app.subscribe(SubscribeRequest(userUID: "carol", start: .afterSeq(start)))
            let whole = cast.app.subscribe(after: start)
            let group = try cast.user("bob").subscribe(SubscribeRequest(guids: ["g"], start: .afterSeq(start)))
            let quiet = cast.app.subscribe(SubscribeRequest(userUID: "dave", start: .afterSeq(start)))
            // Subscriptions are authorized when the server starts them: let them start before bob,
            // who may follow g as a member, is kicked. They count as soon as they are registered,
            // before the check has read the store (a network round trip on PostgreSQL): bob's
            // stream receiving an action shows his check is done.
            #expect(waitUntil { cast.server.subscriptionCount == 4 })
            let owner = try cast.user("owner")
            let settled = try owner.updateGroup(UpdateGroupRequest(guid: "g", description: "subscribed")).version
            #expect(settled > 0 && group.waitForSeq(start + 1) && whole.waitForSeq(start + 1))
            try owner.kick("g", "bob") // ends nothing: bob's group stream is not tied to his membership
            try owner.changeScope("g", "carol", to: .moderator)
            let last = try owner.ban("g", "alice").action?.seq ?? 0
            #expect(whole.waitForSeq(last) && carol.waitForSeq(last) && group.waitForSeq(last))
            // A live subscription (no after_seq) that has been sent nothing.
            let live = cast.app.subscribe(SubscribeRequest(wholeApp: true, actions: [.deleted]))
            #expect(waitUntil { cast.server.subscriptionCount == 5 })

            cast.server.stop(gracePeriodMs: 5_000)
            let expected: [(String, EventRecorder, UInt64)] = [
                ("carol", carol, carol.lastSeq), ("whole app", whole, last), ("group", group, last),
                ("dave (sent nothing)", quiet, start), ("live (sent nothing)", live, last),
            ]
            for (name, stream, resumeAt) in expected {
                let error = try stream.waitForEnd()
                #expect(
                    error?.code == .unavailable && error?.errorCode == "ERR_UNAVAILABLE",
                    "\(name): \(String(describing: error))")
                #expect(
                    error?.details["last_seq"] == String(resumeAt),
                    "\(name): last_seq \(error?.details["last_seq"] ?? "none"), expected \(resumeAt)")
            }
            #expect(carol.seqs.last == last, "carol got her own scope change and the group's ban")

            // Restart on the same directory and resume each stream from its last_seq.
            let server = try ModerationTestServer(directory: directory)
            defer { server.stop() }
            let app = try server.client()
            let resumed = expected.map { name, stream, _ -> (String, EventRecorder, [UInt64]) in
                let at = UInt64(stream.end??.details["last_seq"] ?? "") ?? 0
                let request: SubscribeRequest
                switch name {
                case "carol": request = SubscribeRequest(userUID: "carol", start: .afterSeq(at))
                case "group": request = SubscribeRequest(guids: ["g"], start: .afterSeq(at))
                case "dave (sent nothing)": request = SubscribeRequest(userUID: "dave", start: .afterSeq(at))
                case "live (sent nothing)":
                    request = SubscribeRequest(wholeApp: true, actions: [.deleted], start: .afterSeq(at))
                default: request = SubscribeRequest(wholeApp: true, start: .afterSeq(at))
                }
                return (name, app.subscribe(request), stream.seqs)
            }
            defer { for (_, stream, _) in resumed { stream.cancel() } }
            let dave = try server.client("dave")
            let joined = try dave.join("g").action?.seq ?? 0
            let deleted = try server.client("owner").deleteGroup("g").seq
            #expect(joined == last + 1 && deleted == last + 2, "the log continues where it was")
            let want: [String: [UInt64]] = [
                "carol": [joined, deleted], "whole app": [joined, deleted], "group": [joined, deleted],
                "dave (sent nothing)": [joined, deleted], "live (sent nothing)": [deleted],
            ]
            for (name, stream, before) in resumed {
                let rest = want[name] ?? []
                #expect(stream.waitForSeq(rest.last ?? 0), "\(name) got \(stream.seqs)")
                #expect(stream.seqs == rest, "\(name): after the restart \(stream.seqs), expected \(rest)")
                #expect(Set(before).isDisjoint(with: stream.seqs), "\(name): nothing repeated")
            }
        }
    }
}
