internal import Moderation
internal import ModerationStoreSupport

/// Webhooks: read straight from their table (the writer caches none; delivery must see the
/// lease and the cursor as committed). One writer runs every write of the file, so a lease
/// needs no lock beyond the write's own transaction.
extension SQLiteSession {
    func webhooks(appID: Int64) throws(ModerationError) -> [StoredWebhook] {
        try connection.rows(.webhooksOfApp, appID, decode: decodeWebhook)
    }

    func allWebhooks() throws(ModerationError) -> [StoredWebhook] {
        try connection.rows(.allWebhooks, decode: decodeWebhook)
    }

    func insertWebhook(_ webhook: StoredWebhook) throws(ModerationError) {
        try write(.insertWebhook, webhook)
    }

    func updateWebhook(_ webhook: StoredWebhook) throws(ModerationError) {
        try write(.updateWebhook, webhook)
    }

    func deleteWebhook(appID: Int64, id: String) throws(ModerationError) {
        try connection.execute(.deleteWebhook, appID, id)
    }

    func claimWebhookLease(id: String, owner: String, now: Int64, expiresAt: Int64) throws(ModerationError) -> Bool {
        try connection.execute(.claimWebhookLease, id, owner, now, expiresAt)
        return connection.changes > 0
    }

    func releaseWebhookLeases(owner: String) throws(ModerationError) {
        try connection.execute(.releaseWebhookLeases, owner)
    }

    func recordWebhookDelivery(
        id: String, owner: String, generation: UInt64, status: WebhookStatus, enabled: Bool
    ) throws(ModerationError) -> Bool {
        try connection.execute(
            .recordWebhookDelivery, id, owner, generation, enabled, status.lastDeliveredSeq, status.consecutiveFailures,
            status.lastError, status.nextAttemptAt, status.failingSince)
        return connection.changes > 0
    }

    /// Runs `.insertWebhook` or `.updateWebhook`, which take the same parameters.
    private func write(_ query: Query, _ stored: StoredWebhook) throws(ModerationError) {
        let webhook = stored.webhook
        try connection.execute(
            query, stored.appID, webhook.id, webhook.url, Self.encode(webhook.kinds),
            RecordCoding.encode(webhook.guids),
            webhook.description, webhook.enabled, webhook.createdAt, stored.secret, stored.generation,
            webhook.status.lastDeliveredSeq, webhook.status.consecutiveFailures, webhook.status.lastError,
            webhook.status.nextAttemptAt, webhook.status.failingSince)
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
