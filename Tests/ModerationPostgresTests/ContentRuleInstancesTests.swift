import Glibc
import Moderation
import StoreTestSupport
import TestSupport
import Testing
import ThreadSupport

@testable import ModerationPostgres

/// Content rules across instances on one database: a change answers once it applies on the
/// instance that took it, and every other instance picks it up from the sets' versions within a
/// poll (500 ms) and its compile.
@Suite("PostgreSQL store: content rules across instances")
struct ContentRuleInstancesTests {
    @Test("rules added or deleted through one instance apply on another within 1 s")
    func rulesApplyEverywhere() throws {
        try Instance.withPair { _, _, first, second in
            let app = first.client()
            for uid in ["o", "p"] { try app.createUser(uid) }
            try app.createGroup("g", owner: "o", members: [MemberGrant(uid: "p")])
            #expect(try second.client().checkPost("g", "p", text: "buy spam now").allowed)

            let added = monotonicNanoseconds()
            let rule = try app.addContentRule("g", .word, "spam")
            #expect(try app.checkPost("g", "p", text: "buy spam now").refusal == .contentBlocked, "this instance")
            let applied = try Self.waitFor { try second.client().checkPost("g", "p", text: "buy spam now").refusal }
            #expect(applied == .contentBlocked)
            #expect(monotonicNanoseconds() - added < 1_000_000_000, "within 1 s")

            try second.client().addContentRule("", .domain, "evil.example", .flag)
            let flagged = try Self.waitFor {
                try first.client().checkPost("g", "p", text: "see http://a.evil.example/x").flagged ? true : nil
            }
            #expect(flagged == true)

            let deleted = monotonicNanoseconds()
            try second.client().deleteContentRules("g", [rule.id])
            let lifted = try Self.waitFor { try app.checkPost("g", "p", text: "buy spam now").allowed ? true : nil }
            #expect(lifted == true)
            #expect(monotonicNanoseconds() - deleted < 1_000_000_000, "within 1 s")
        }
    }

    /// The first non-nil value of `probe`, asked every 20 ms for up to 2 s.
    static func waitFor<T>(_ probe: () throws -> T?) throws -> T? {
        let deadline = monotonicNanoseconds() + 2_000_000_000
        while monotonicNanoseconds() < deadline {
            if let value = try probe() { return value }
            usleep(20_000)
        }
        return nil
    }
}
