import ContentMatching
import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Content rules (docs/SERVICE.md "Content rules"): who may keep the app's and a group's sets,
/// each refusal, the limits, idempotent adds, paging, the action, and CheckPost reading the text
/// after the user's standing.
@Suite("Content rules", .onEveryStore)
struct ContentRuleTests {
    /// Users o (owner of "g"), a (admin), m (moderator), p (participant), x (outside); group "g"
    /// public, "priv" private with o only.
    static func setUp() throws -> ServiceHarness {
        let harness = try ServiceHarness()
        let app = harness.client()
        for uid in ["o", "a", "m", "p", "x"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "o",
            members: [
                MemberGrant(uid: "a", scope: .admin), MemberGrant(uid: "m", scope: .moderator), MemberGrant(uid: "p"),
            ])
        try app.createGroup("priv", type: .private, owner: "o")
        return harness
    }

    /// One call and the code it must fail with (nil: success).
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: ErrorCode?
        let run: @Sendable (ServiceHarness) throws -> Void

        var testDescription: String { name }
    }

    static let word = NewContentRule(kind: .word, pattern: "badword", action: .block)

    static let cases: [Case] = [
        Case(name: "the app adds to its set", expected: nil) { try $0.client().addContentRules("", [word]) },
        Case(name: "an owner may not add to the app's set", expected: .permissionDenied) {
            try $0.client("o").addContentRules("", [word])
        },
        Case(name: "the app adds to a group's", expected: nil) { try $0.client().addContentRules("g", [word]) },
        Case(name: "the owner adds to the group's", expected: nil) { try $0.client("o").addContentRules("g", [word]) },
        Case(name: "an admin adds to the group's", expected: nil) { try $0.client("a").addContentRules("g", [word]) },
        Case(name: "a moderator may not add", expected: .permissionDenied) {
            try $0.client("m").addContentRules("g", [word])
        },
        Case(name: "a participant may not add", expected: .permissionDenied) {
            try $0.client("p").addContentRules("g", [word])
        },
        Case(name: "an outsider may not add", expected: .groupNotJoined) {
            try $0.client("x").addContentRules("g", [word])
        },
        Case(name: "a private group is not found for an outsider", expected: .groupNotFound) {
            try $0.client("x").addContentRules("priv", [word])
        },
        Case(name: "an unknown group", expected: .groupNotFound) { try $0.client().addContentRules("nope", [word]) },
        Case(name: "no rules", expected: .invalidArgument) { try $0.client().addContentRules("", []) },
        Case(name: "over 1 000 rules in a call", expected: .invalidArgument) {
            try $0.client().addContentRules("", Array(repeating: word, count: 1001))
        },
        Case(name: "an invalid guid", expected: .invalidArgument) {
            try $0.client().addContentRules("Not Valid!", [word])
        },
        Case(name: "the app deletes", expected: nil) {
            let rule = try $0.client().addContentRule("", .word, "x")
            try $0.client().deleteContentRules("", [rule.id])
        },
        Case(name: "a moderator may not delete", expected: .permissionDenied) {
            let rule = try $0.client().addContentRule("g", .word, "x")
            try $0.client("m").deleteContentRules("g", [rule.id])
        },
        Case(name: "no ids", expected: .invalidArgument) { try $0.client().deleteContentRules("", []) },
        Case(name: "id 0", expected: .invalidArgument) { try $0.client().deleteContentRules("", [0]) },
        Case(name: "the app lists its set", expected: nil) { _ = try $0.client().listContentRules("") },
        Case(name: "a user may not list the app's set", expected: .permissionDenied) {
            _ = try $0.client("o").listContentRules("")
        },
        Case(name: "a moderator lists the group's", expected: nil) { _ = try $0.client("m").listContentRules("g") },
        Case(name: "a participant may not list", expected: .permissionDenied) {
            _ = try $0.client("p").listContentRules("g")
        },
        Case(name: "a cursor of another list", expected: .invalidArgument) {
            _ = try $0.client().listContentRules("g", cursor: "AWI")
        },
        Case(name: "a user banned from the app", expected: .userBannedFromApp) {
            try $0.client().banFromApp("o")
            try $0.client("o").addContentRules("g", [word])
        },
    ]

    @Test("who may call, and each error code", arguments: cases)
    func permissions(_ testCase: Case) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        #expect(ModerationClient.code { try testCase.run(harness) } == testCase.expected)
    }

    @Test(
        "each rule is checked on its own: refused rules name the field and the reason, the others are added",
        arguments: [
            (NewContentRule(kind: nil, pattern: "x", action: .block), "rules[0].kind"),
            (NewContentRule(kind: .word, pattern: "x", action: nil), "rules[0].action"),
            (NewContentRule(kind: .word, pattern: "", action: .block), "rules[0].pattern"),
            (
                NewContentRule(kind: .word, pattern: String(repeating: "w", count: 201), action: .block),
                "rules[0].pattern"
            ),
            (
                NewContentRule(
                    kind: .word, pattern: "ok", action: .flag, description: String(repeating: "d", count: 256)),
                "rules[0].description"
            ),
            (NewContentRule(kind: .regex, pattern: "(a)\\1", action: .block), "\"(a)\\1\" is refused"),
            (NewContentRule(kind: .regex, pattern: "foo(?=bar)", action: .block), "\"foo(?=bar)\" is refused"),
            (NewContentRule(kind: .domain, pattern: "not a domain", action: .block), "\"not a domain\" is refused"),
        ])
    func refusedRules(_ rule: NewContentRule, _ named: String) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let result = try harness.client().addContentRules("", [rule, Self.word])
        #expect(result.outcomes[0].rule == nil && result.outcomes[0].error?.code == .invalidArgument)
        #expect(result.outcomes[0].error?.message.contains(named) == true, "\(result.outcomes[0].error?.message ?? "")")
        #expect(result.outcomes[1].rule?.pattern == "badword" && result.outcomes[1].changed)
        #expect(result.action?.rulesAdded == 1)
    }

    @Test("a rule the set holds is answered unchanged; nothing new records no action")
    func idempotentAdds() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let first = try app.addContentRules("g", [Self.word, Self.word])
        #expect(first.outcomes.map(\.changed) == [true, false])
        #expect(first.outcomes[0].rule?.id == first.outcomes[1].rule?.id)
        #expect(first.action?.kind == .contentRulesChanged && first.action?.rulesAdded == 1)
        let again = try app.addContentRules("g", [Self.word])
        #expect(again.outcomes[0].changed == false && again.outcomes[0].rule?.id == first.outcomes[0].rule?.id)
        #expect(again.action == nil)
        #expect(try app.listContentRules("g").items.count == 1)
    }

    @Test("deletions: each id answered, unknown ones ERR_CONTENT_RULE_NOT_FOUND, one action")
    func deletions() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let rule = try app.addContentRule("g", .word, "spam")
        let other = try app.addContentRule("", .word, "ham")
        let result = try app.deleteContentRules("g", [rule.id, rule.id, other.id, 999])
        #expect(result.outcomes.map(\.changed) == [true, false, false, false])
        #expect(result.outcomes.dropFirst().allSatisfy { $0.error?.code == .contentRuleNotFound })
        #expect(result.outcomes.map(\.id) == [rule.id, rule.id, other.id, 999])
        #expect(result.action?.rulesRemoved == 1 && result.action?.group.guid == "g")
        #expect(try app.listContentRules("g").items.isEmpty)
        #expect(try app.listContentRules("").items == [other])
    }

    @Test("the limit of a group's set: ERR_RATE_LIMITED with the limit, nothing added")
    func groupLimit() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let rules = (0..<1000).map { NewContentRule(kind: .word, pattern: "w\($0)", action: .block) }
        try app.addContentRules("g", rules)
        let over = ModerationClient.error {
            try app.addContentRules("g", [NewContentRule(kind: .word, pattern: "one", action: .flag)])
        }
        #expect(over?.code == .rateLimited && over?.details["limit"] == "1000")
        #expect(try app.listContentRules("g", limit: 100).items.count == 100)
    }

    @Test("the limit of the app's set is 10 000")
    func appLimit() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        for batch in 0..<10 {
            try app.addContentRules(
                "", (0..<1000).map { NewContentRule(kind: .word, pattern: "w\(batch)x\($0)", action: .flag) })
        }
        let over = ModerationClient.error { try app.addContentRules("", [Self.word]) }
        #expect(over?.code == .rateLimited && over?.details["limit"] == "10000")
    }

    @Test("paging is by id, oldest first")
    func paging() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.addContentRules("g", (0..<5).map { NewContentRule(kind: .word, pattern: "p\($0)", action: .block) })
        let first = try app.listContentRules("g", limit: 2)
        let second = try app.listContentRules("g", limit: 2, cursor: first.nextCursor)
        let third = try app.listContentRules("g", limit: 2, cursor: second.nextCursor)
        #expect((first.items + second.items + third.items).map(\.pattern) == ["p0", "p1", "p2", "p3", "p4"])
        #expect(third.nextCursor.isEmpty && !second.nextCursor.isEmpty)
        #expect(first.items[0].createdBy == "@app" && first.items[0].guid == "g")
    }

    @Test("CheckPost: block, flag, both sets listed in order of start, spans in bytes of the text as sent")
    func checkPost() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let blocked = try app.addContentRule("", .word, "badword")
        let flagged = try app.addContentRule("g", .word, "meh", .flag)
        let clean = try app.checkPost("g", "p", text: "hello there")
        #expect(clean.allowed && !clean.flagged && clean.matches.isEmpty)
        let flag = try app.checkPost("g", "p", text: "well meh")
        #expect(flag.allowed && flag.flagged && flag.matches == [ContentMatch(ruleID: flagged.id, start: 5, end: 8)])
        let text = "Ünïcode MEH then BÁDWORD"
        let block = try app.checkPost("g", "p", text: text)
        #expect(!block.allowed && block.refusal == .contentBlocked && !block.flagged)
        let bytes = Array(text.utf8)
        #expect(block.matches.map(\.ruleID) == [flagged.id, blocked.id])
        #expect(block.matches.map { String(decoding: bytes[$0.start..<$0.end], as: UTF8.self) } == ["MEH", "BÁDWORD"])
        // Another group sees the app's set only.
        try app.createGroup("h", owner: "o", members: [MemberGrant(uid: "p")])
        #expect(try app.checkPost("h", "p", text: "meh").allowed && !(try app.checkPost("h", "p", text: "meh").flagged))
        #expect(try app.checkPost("h", "p", text: "badword").refusal == .contentBlocked)
    }

    @Test("the standing first: a refused user's text is not scanned; a shadow ban's mark stays on a flagged post")
    func standingFirst() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.addContentRule("", .word, "badword")
        try app.addContentRule("", .word, "meh", .flag)
        #expect(try app.checkPost("g", "x", text: "badword").refusal == .groupNotJoined)
        #expect(try app.checkPost("g", "x", text: "badword").matches.isEmpty)
        try app.mute("g", "p")
        #expect(try app.checkPost("g", "p", text: "badword").refusal == .memberMuted)
        try app.banFromApp("m", shadow: true)
        let shadowFlag = try app.checkPost("g", "m", text: "meh")
        #expect(shadowFlag.allowed && shadowFlag.shadowed && shadowFlag.flagged)
        let shadowBlock = try app.checkPost("g", "m", text: "badword")
        #expect(!shadowBlock.allowed && shadowBlock.refusal == .contentBlocked && !shadowBlock.shadowed)
    }

    @Test("a text over 10 000 bytes refuses the call, naming the check")
    func textLimit() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        #expect(try app.checkPost("g", "p", text: String(repeating: "a", count: 10_000)).allowed)
        let error = ModerationClient.error {
            try app.checkPost([
                PostCheck(guid: "g", uid: "p"),
                PostCheck(guid: "g", uid: "p", text: String(repeating: "é", count: 5001)),
            ])
        }
        #expect(error?.code == .invalidArgument && error?.message.contains("checks[1].text") == true)
    }

    @Test("deleting a rule lifts it; deleting the group drops its set")
    func deletionApplies() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let rule = try app.addContentRule("g", .word, "spam")
        #expect(try app.checkPost("g", "p", text: "spam").refusal == .contentBlocked)
        try app.deleteContentRules("g", [rule.id])
        #expect(try app.checkPost("g", "p", text: "spam").allowed)
        try app.addContentRule("g", .word, "spam")
        try app.deleteGroup("g")
        try app.createGroup("g", owner: "o", members: [MemberGrant(uid: "p")])
        #expect(try app.listContentRules("g").items.isEmpty)
    }

    @Test("contentRulesChanged is private: the group's admins and moderators and the app see it")
    func actionVisibility() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        try app.addContentRule("g", .word, "spam")
        let kinds: Set<ActionKind> = [.contentRulesChanged]
        func seen(_ uid: String?) throws -> Int {
            try harness.client(uid).actions("g", ListActionsOptions(kinds: kinds)).actions.count
        }
        #expect(try seen(nil) == 1 && seen("o") == 1 && seen("a") == 1 && seen("m") == 1)
        #expect(try seen("p") == 0)
    }

    @Test("an idempotency key replays the first reply")
    func idempotency() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        func add(_ pattern: String) -> MutationResult<ContentRulesResult> {
            MutationWaiter.wait { done in
                harness.service.addContentRules(
                    Caller(app: "app", idempotencyKey: "k1"), guid: "g",
                    rules: [NewContentRule(kind: .word, pattern: pattern, action: .block)],
                    replay: MutationWaiter.describe, completion: done)
            }
        }
        guard case .done(.success(let first), let recorded?) = add("badword") else {
            Issue.record("the first call did not run")
            return
        }
        guard case .replayed(let bytes) = add("other") else {
            Issue.record("the retry ran again")
            return
        }
        #expect(bytes == recorded && first.action?.rulesAdded == 1)
        #expect(try harness.client().listContentRules("g").items.map(\.pattern) == ["badword"])
    }
}
