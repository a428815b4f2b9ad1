import ModerationMessages
import ProtoBridge
import RPCCore
import RPCPosix
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Content rules over real sockets: the three calls with their per-rule results, CheckPost's
    /// `flagged` and `matches` in bytes of the text as sent, the refusals of the whole call, and
    /// the private `contentRulesChanged` action on the streams.
    @Suite("Content rules over the wire", .onEveryStore)
    struct ContentRuleWireTests {
        static func rule(_ kind: ContentRuleKind, _ pattern: String, _ action: ContentAction = .block)
            -> NewContentRule
        {
            NewContentRule(kind: kind, pattern: pattern, action: action)
        }

        @Test("add, check, list and delete; refused rules answered one by one")
        func rulesAndChecks() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let whole = cast.app.subscribe(SubscribeRequest(wholeApp: true))
            let carolStream = try cast.user("carol").subscribe(SubscribeRequest(guids: ["g"]))
            let bobStream = try cast.user("bob").subscribe(SubscribeRequest(guids: ["g"]))
            defer { for stream in [whole, carolStream, bobStream] { stream.cancel() } }
            for stream in [whole, carolStream, bobStream] { try stream.waitForStart() }

            let added = try cast.app.addContentRules(
                "",
                [
                    Self.rule(.word, "spam*"), Self.rule(.regex, "(a)\\1"), Self.rule(.domain, "evil.example", .flag),
                    NewContentRule(kind: .word, pattern: "x"),
                ])
            #expect(added.results.map(\.ok) == [true, false, true, false])
            #expect(added.results[1].errorCode == "ERR_INVALID_ARGUMENT" && added.results[1].message.contains("(a)\\1"))
            #expect(added.results[3].message.contains("rules[3].action"))
            #expect(added.action?.action == .contentRulesChanged && added.action?.rulesAdded == 2)
            #expect(added.action?.actionFor == nil, "the app's set: an action of the whole app")
            let spam = try #require(added.results[0].rule)
            #expect(spam.id > 0 && spam.kind == .word && spam.pattern == "spam*" && spam.createdBy == "@app")

            let text = "Ｓｐａｍｍｅｒ at https://WWW.Evil.Example:8443/x"
            let blocked = try cast.app.checkPost("g", "carol", text: text)
            #expect(!blocked.allowed && blocked.errorCode == "ERR_CONTENT_BLOCKED" && !blocked.flagged)
            let bytes = Array(text.utf8)
            #expect(
                blocked.matches.map { String(decoding: bytes[Int($0.start)..<Int($0.end)], as: UTF8.self) } == [
                    "Ｓｐａｍｍｅｒ", "WWW.Evil.Example",
                ])
            let flagged = try cast.app.checkPost("g", "carol", text: "see evil.example")
            #expect(flagged.allowed && flagged.flagged && flagged.matches.count == 1)
            #expect(try cast.app.checkPost("g", "carol", text: "hello").matches.isEmpty)

            let alice = try cast.user("alice")
            let groupRule = try alice.addContentRules("g", [Self.rule(.word, "meh", .flag)])
            #expect(groupRule.action?.actionFor?.guid == "g")
            #expect(try cast.user("bob").checkPost("g", text: "meh spam").errorCode == "ERR_CONTENT_BLOCKED")
            expectFailure(
                failure { try cast.user("bob").addContentRules("g", [Self.rule(.word, "x")]) }, .permissionDenied,
                "ERR_PERMISSION_DENIED")
            expectFailure(
                failure { try alice.addContentRules("", [Self.rule(.word, "x")]) }, .permissionDenied,
                "ERR_PERMISSION_DENIED")

            let listed = try cast.app.contentRules("", limit: 1)
            #expect(listed.rules.map(\.id) == [spam.id] && !listed.nextCursor.isEmpty)
            #expect(try cast.app.contentRules("", cursor: listed.nextCursor).rules.map(\.pattern) == ["evil.example"])

            let deleted = try cast.app.deleteContentRules("", [spam.id, 424242])
            #expect(
                deleted.results.map(\.ok) == [true, false]
                    && deleted.results[1].errorCode == "ERR_CONTENT_RULE_NOT_FOUND")
            #expect(deleted.results.map(\.id) == [spam.id, 424242] && deleted.action?.rulesRemoved == 1)
            #expect(try cast.app.checkPost("g", "carol", text: "spammer").allowed)

            let last = try #require(deleted.action?.seq)
            #expect(whole.waitForSeq(last))
            #expect(whole.actions.filter { $0.action == .contentRulesChanged }.count == 3)
            // bob moderates g and sees the group's change; carol, a participant, does not.
            let groupSeq = try #require(groupRule.action?.seq)
            #expect(bobStream.waitForSeq(groupSeq))
            #expect(bobStream.actions.map(\.action) == [.contentRulesChanged])
            #expect(carolStream.actions.allSatisfy { $0.action != .contentRulesChanged })
        }

        @Test("100 texts of 10 000 bytes: answered (on a worker, not the event loop), each scanned")
        func largeTexts() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            try cast.app.addContentRules("", [Self.rule(.word, "needle")])
            let hay = String(repeating: "hay ", count: 2_500)
            let needle = String(repeating: "hay ", count: 2_498) + "needle "
            let texts = (0..<100).map { $0 % 10 == 0 ? needle : hay }
            let request = CheckPostRequest(checks: texts.map { PostCheck(guid: "g", uid: "carol", text: $0) })
            let results = try cast.app.call(ModerationMethods.checkPost, request).results
            #expect(results.count == 100)
            #expect(
                results.enumerated().allSatisfy {
                    ($0.offset % 10 == 0) == ($0.element.errorCode == "ERR_CONTENT_BLOCKED")
                })
            #expect(results[0].matches.map(\.start) == [9_992])
        }

        @Test("a text over 10 000 bytes, or not UTF-8, refuses the whole call with ERR_INVALID_ARGUMENT")
        func badTexts() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            expectFailure(
                failure { try cast.app.checkPost("g", "carol", text: String(repeating: "x", count: 10_001)) },
                .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "checks[0].text")
            // checks[0] = {guid "g", uid "carol", text 0xFF 0xFE}, written by hand.
            let check: [UInt8] = [0x0A, 0x01, 0x67, 0x12, 0x05] + Array("carol".utf8) + [0x1A, 0x02, 0xFF, 0xFE]
            let body: [UInt8] = [0x0A, UInt8(check.count)] + check
            expectFailure(
                failure { try cast.app.connection.call(path: ModerationMethods.checkPost.path, body: body) },
                .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "text")
        }
    }
}
