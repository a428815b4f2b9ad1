internal import ByteCoding

/// One action of the log as a webhook carries it: its seq, commit time, and its proto3 JSON.
public struct WebhookAction: Sendable, Equatable {
    public let seq: UInt64
    /// Unix milliseconds (the action's `timestamp`).
    public let committedAtMilliseconds: Int64
    /// The action's proto3 JSON (UTF-8), as the caller encoded it; inserted as it is.
    public let json: [UInt8]

    public init(seq: UInt64, committedAtMilliseconds: Int64, json: [UInt8]) {
        self.seq = seq
        self.committedAtMilliseconds = committedAtMilliseconds
        self.json = json
    }
}

/// One request's worth of actions: its body and its `webhook-id`.
public struct WebhookBatch: Sendable, Equatable {
    /// `<webhook id>_<first seq>_<last seq>`: the same for every retry of the batch.
    public let messageID: String
    public let firstSeq: UInt64
    public let lastSeq: UInt64
    public let actionCount: Int
    public let body: [UInt8]
}

/// The request bodies of `moderation.actions` webhooks.
///
/// `{"type":"moderation.actions","timestamp":…,"data":{"app":…,"actions":[…]}}` where
/// `timestamp` is the first action's commit time: nothing in the body depends on when it is
/// sent, so a retried batch is byte for byte the same and so is its `webhook-id`.
public enum WebhookPayload {
    /// At most this many actions per request.
    public static let maximumActions = 100
    /// At most this many bytes of body per request, unless one action alone is larger: it then
    /// goes alone, since it cannot be split and skipping it would lose it.
    public static let maximumBodyBytes = 256 * 1024

    /// The batch that starts at `actions`' first element: as many actions as fit; nil when empty.
    public static func batch(webhookID: String, app: String, actions: some Collection<WebhookAction>) -> WebhookBatch? {
        guard let first = actions.first else { return nil }
        let head =
            Array(#"{"type":"moderation.actions","timestamp":""#.utf8)
            + Array(rfc3339(milliseconds: first.committedAtMilliseconds).utf8)
            + Array(#"","data":{"app":"#.utf8) + quoted(app) + Array(#","actions":["#.utf8)
        let tail = Array("]}}".utf8)
        var body = head
        var count = 0
        var last = first.seq
        for action in actions.prefix(maximumActions) {
            let added = action.json.count + (count == 0 ? 0 : 1)
            if count > 0, body.count + added + tail.count > maximumBodyBytes { break }
            if count > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: action.json)
            count += 1
            last = action.seq
        }
        body.append(contentsOf: tail)
        return WebhookBatch(
            messageID: "\(webhookID)_\(first.seq)_\(last)", firstSeq: first.seq, lastSeq: last, actionCount: count,
            body: body)
    }

    /// The body of `TestWebhook`'s request: `{"type":"ping","timestamp":…,"data":{"app":…,"webhook":…}}`.
    public static func ping(webhookID: String, app: String, atMilliseconds milliseconds: Int64) -> [UInt8] {
        Array(#"{"type":"ping","timestamp":"#.utf8) + quoted(rfc3339(milliseconds: milliseconds))
            + Array(#","data":{"app":"#.utf8) + quoted(app) + Array(#","webhook":"#.utf8) + quoted(webhookID)
            + Array("}}".utf8)
    }

    /// `actions` cut into consecutive batches.
    public static func batches(webhookID: String, app: String, actions: [WebhookAction]) -> [WebhookBatch] {
        var batches: [WebhookBatch] = []
        var rest = actions[...]
        while let batch = batch(webhookID: webhookID, app: app, actions: rest) {
            batches.append(batch)
            rest = rest.dropFirst(batch.actionCount)
        }
        return batches
    }

    /// `2026-12-07T18:42:53.120Z`: UTC, always three fractional digits (proto3 JSON's Timestamp
    /// form for whole milliseconds).
    public static func rfc3339(milliseconds: Int64) -> String {
        let (seconds, millisecond) = floorDivision(milliseconds, 1000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm, proleptic Gregorian).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(secondOfDay / 3600, 2)):"
            + "\(digits(secondOfDay / 60 % 60, 2)):\(digits(secondOfDay % 60, 2)).\(digits(millisecond, 3))Z"
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = ((value % divisor) + divisor) % divisor
        return ((value - remainder) / divisor, remainder)
    }

    /// `text` as a JSON string literal (the escapes every JSON this server writes uses).
    static func quoted(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONText.appendQuoted(text, to: &out)
        return out
    }
}
