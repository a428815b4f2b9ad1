internal import CSQLite
internal import Moderation
internal import ModerationStoreSupport

/// Webhooks: read straight from their table (the writer caches none; delivery must see the
/// lease and the cursor as committed). One writer runs every write of the file, so a lease
/// needs no lock beyond the write's own transaction.
extension SQLiteSession {
    func webhooks(appID: Int64) throws(ModerationError) -> [StoredWebhook] {
        try connection.run(.webhooksOfApp) { (statement) throws(ModerationError) -> [StoredWebhook] in
            statement.bind(1, appID)
            var webhooks: [StoredWebhook] = []
            while try statement.step() { webhooks.append(try decodeWebhook(statement)) }
            return webhooks
        }
    }

    func enabledWebhooks() throws(ModerationError) -> [StoredWebhook] {
        try connection.run(.enabledWebhooks) { (statement) throws(ModerationError) -> [StoredWebhook] in
            var webhooks: [StoredWebhook] = []
            while try statement.step() { webhooks.append(try decodeWebhook(statement)) }
            return webhooks
        }
    }

    func insertWebhook(_ webhook: StoredWebhook) throws(ModerationError) {
        try write(.insertWebhook, webhook)
    }

    func updateWebhook(_ webhook: StoredWebhook) throws(ModerationError) {
        try write(.updateWebhook, webhook)
    }

    func deleteWebhook(appID: Int64, id: String) throws(ModerationError) {
        try connection.run(.deleteWebhook) { (statement) throws(ModerationError) in
            statement.bind(1, appID)
            statement.bind(2, id)
            try statement.execute()
        }
    }

    func claimWebhookLease(id: String, owner: String, now: Int64, expiresAt: Int64) throws(ModerationError) -> Bool {
        try connection.run(.claimWebhookLease) { (statement) throws(ModerationError) -> Bool in
            statement.bind(1, id)
            statement.bind(2, owner)
            statement.bind(3, now)
            statement.bind(4, expiresAt)
            try statement.execute()
            return sqlite3_changes64(connection.handle) > 0
        }
    }

    func releaseWebhookLeases(owner: String) throws(ModerationError) {
        try connection.run(.releaseWebhookLeases) { (statement) throws(ModerationError) in
            statement.bind(1, owner)
            try statement.execute()
        }
    }

    func recordWebhookDelivery(
        id: String, owner: String, generation: UInt64, status: WebhookStatus, enabled: Bool
    ) throws(ModerationError) -> Bool {
        try connection.run(.recordWebhookDelivery) { (statement) throws(ModerationError) -> Bool in
            statement.bind(1, id)
            statement.bind(2, owner)
            statement.bind(3, generation)
            statement.bind(4, enabled ? 1 : 0)
            statement.bind(5, status.lastDeliveredSeq)
            statement.bind(6, status.consecutiveFailures)
            statement.bind(7, status.lastError)
            statement.bind(8, status.nextAttemptAt)
            statement.bind(9, status.failingSince)
            try statement.execute()
            return sqlite3_changes64(connection.handle) > 0
        }
    }

    /// Runs `.insertWebhook` or `.updateWebhook`, which take the same parameters.
    private func write(_ query: Query, _ stored: StoredWebhook) throws(ModerationError) {
        let webhook = stored.webhook
        try connection.run(query) { (statement) throws(ModerationError) in
            statement.bind(1, stored.appID)
            statement.bind(2, webhook.id)
            statement.bind(3, webhook.url)
            statement.bind(4, Self.encode(webhook.kinds))
            statement.bind(5, blob: RecordCoding.encode(webhook.guids))
            statement.bind(6, webhook.description)
            statement.bind(7, webhook.enabled ? 1 : 0)
            statement.bind(8, webhook.createdAt)
            statement.bind(9, stored.secret)
            statement.bind(10, stored.generation)
            statement.bind(11, webhook.status.lastDeliveredSeq)
            statement.bind(12, webhook.status.consecutiveFailures)
            statement.bind(13, webhook.status.lastError)
            statement.bind(14, webhook.status.nextAttemptAt)
            statement.bind(15, webhook.status.failingSince)
            try statement.execute()
        }
    }

    /// A webhook row in the order of `Query.webhookColumns`.
    private func decodeWebhook(_ statement: SQLiteStatement) throws(ModerationError) -> StoredWebhook {
        let status = WebhookStatus(
            lastDeliveredSeq: statement.uint64(11), consecutiveFailures: statement.int(12),
            lastError: statement.string(13), nextAttemptAt: statement.int64(14), failingSince: statement.int64(15))
        let webhook = Webhook(
            id: statement.string(2), url: statement.string(3), kinds: Self.kinds(statement.string(4)),
            guids: try RecordCoding.strings(statement.blob(5)), description: statement.string(6),
            enabled: statement.int(7) != 0, createdAt: statement.int64(8), status: status)
        return StoredWebhook(
            appID: statement.int64(0), app: statement.string(1), webhook: webhook, secret: statement.string(9),
            generation: statement.uint64(10))
    }

    /// Kinds as stored: their codes, comma-separated, in the webhook's order ("" for none).
    private static func encode(_ kinds: [ActionKind]) -> String {
        kinds.map { String(StorageCodes.code($0)) }.joined(separator: ",")
    }

    private static func kinds(_ text: String) -> [ActionKind] {
        text.split(separator: ",").compactMap { Int($0) }.map { StorageCodes.kind($0) }
    }
}
