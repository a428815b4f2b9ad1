import Testing
import WebhookDelivery

/// Request bodies: their exact bytes, batch cuts at 100 actions and 256 KiB, ids, and times.
@Suite("WebhookPayload")
struct WebhookPayloadTests {
    private static func actions(_ seqs: ClosedRange<UInt64>, jsonBytes: Int = 0) -> [WebhookAction] {
        seqs.map { seq in
            let padding = String(repeating: "x", count: max(0, jsonBytes - 20))
            return WebhookAction(
                seq: seq, committedAtMilliseconds: 1_614_265_330_123 + Int64(seq),
                json: Array(#"{"seq":"\#(seq)","r":"\#(padding)"}"#.utf8))
        }
    }

    @Test("The body's bytes: type, the first action's commit time, the app, the actions as given")
    func exactBody() throws {
        let actions = [
            WebhookAction(
                seq: 41, committedAtMilliseconds: 1_614_265_330_123,
                json: Array(#"{"seq":"41","action":"ACTION_TYPE_BANNED"}"#.utf8)),
            WebhookAction(seq: 42, committedAtMilliseconds: 1_614_265_339_000, json: Array(#"{"seq":"42"}"#.utf8)),
        ]
        let batch = try #require(WebhookPayload.batch(webhookID: "wh_9", app: "app \"one\"", actions: actions))
        #expect(
            String(decoding: batch.body, as: UTF8.self)
                == #"{"type":"moderation.actions","timestamp":"2021-02-25T15:02:10.123Z","data":{"app":"app \"one\"","actions":[{"seq":"41","action":"ACTION_TYPE_BANNED"},{"seq":"42"}]}}"#
        )
        #expect(batch.messageID == "wh_9_41_42")
        #expect((batch.firstSeq, batch.lastSeq, batch.actionCount) == (41, 42, 2))
        #expect(WebhookPayload.batch(webhookID: "wh_9", app: "app \"one\"", actions: actions) == batch)
        #expect(WebhookPayload.batch(webhookID: "wh_9", app: "a", actions: [WebhookAction]()) == nil)
    }

    @Test("Batches are cut at 100 actions")
    func cutAtHundred() {
        let batches = WebhookPayload.batches(webhookID: "w", app: "a", actions: Self.actions(1...250))
        #expect(batches.map(\.actionCount) == [100, 100, 50])
        #expect(batches.map(\.messageID) == ["w_1_100", "w_101_200", "w_201_250"])
    }

    @Test("Batches are cut before 256 KiB; an action larger than that goes alone")
    func cutAtSize() {
        let batches = WebhookPayload.batches(webhookID: "w", app: "a", actions: Self.actions(1...20, jsonBytes: 30_000))
        #expect(batches.allSatisfy { $0.body.count <= WebhookPayload.maximumBodyBytes })
        #expect(batches.map(\.actionCount) == [8, 8, 4])
        #expect(batches.map(\.firstSeq) == [1, 9, 17])
        let huge = WebhookPayload.batches(
            webhookID: "w", app: "a", actions: Self.actions(1...3, jsonBytes: 300_000))
        #expect(huge.map(\.actionCount) == [1, 1, 1])
    }

    @Test(
        "Commit times in RFC 3339, UTC, with milliseconds",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"),
            (1_614_265_330_123, "2021-02-25T15:02:10.123Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        ])
    func rfc3339(milliseconds: Int64, expected: String) {
        #expect(WebhookPayload.rfc3339(milliseconds: milliseconds) == expected)
    }
}
