internal import Moderation
internal import ModerationStoreSupport

/// Webhooks: read straight from their table (the writer caches none, `CachedRead` neither:
/// delivery must see the lease and the cursor as committed).
///
/// The app creates, changes and deletes its webhooks under the app's lock, which the write took
/// when it looked the app up. Leases and delivery's progress are written without it, row by row
/// (a delivery's write names only the webhook). Either way a webhook's row is locked only as
/// the app's lock is: a transaction that already holds a lock skips a row another writer holds
/// and the write is deferred to the next batch, so no writer waits while holding a lock.
extension PostgresSession {
    func webhooks(appID: Int64) throws(ModerationError) -> [StoredWebhook] {
        let rows = try connection.query(.webhooksOfApp, [.int(appID)])
        return (0..<rows.rowCount).map { decodeWebhook(rows, $0) }
    }

    func enabledWebhooks() throws(ModerationError) -> [StoredWebhook] {
        let rows = try connection.query(.enabledWebhooks, [])
        return (0..<rows.rowCount).map { decodeWebhook(rows, $0) }
    }

    func insertWebhook(_ webhook: StoredWebhook) throws(ModerationError) {
        try connection.send(.insertWebhook, parameters(webhook))
    }

    func updateWebhook(_ webhook: StoredWebhook) throws(ModerationError) {
        guard try lockWebhook(id: webhook.webhook.id) else { return }
        try connection.send(.updateWebhook, parameters(webhook))
    }

    func deleteWebhook(appID: Int64, id: String) throws(ModerationError) {
        guard try lockWebhook(id: id) else { return }
        try connection.send(.deleteWebhook, [.int(appID), .text(id)])
    }

    func claimWebhookLease(id: String, owner: String, now: Int64, expiresAt: Int64) throws(ModerationError) -> Bool {
        guard try lockWebhook(id: id) else { return false }
        let claimed = try connection.query(
            .claimWebhookLease, [.text(id), .text(owner), .int(now), .int(expiresAt)])
        return claimed.rowCount > 0
    }

    func releaseWebhookLeases(owner: String) throws(ModerationError) {
        if holdsLocks {
            // Every row of the owner's leases, or none: a row another writer holds defers the write.
            let held = try connection.query(.leasedWebhooks, [.text(owner)]).int(0, 0)
            let locked = try connection.query(.lockLeasedWebhooksSkipping, [.text(owner)]).rowCount
            if locked < held { throw webhookDeferral("the leases of \(owner)") }
        }
        try connection.send(.releaseWebhookLeases, [.text(owner)])
    }

    func recordWebhookDelivery(
        id: String, owner: String, generation: UInt64, status: WebhookStatus, enabled: Bool
    ) throws(ModerationError) -> Bool {
        guard try lockWebhook(id: id) else { return false }
        let recorded = try connection.query(
            .recordWebhookDelivery,
            [
                .text(id), .text(owner), .int(generation), .bool(enabled), .int(status.lastDeliveredSeq),
                .int(status.consecutiveFailures), .text(status.lastError), .int(status.nextAttemptAt),
                .int(status.failingSince),
            ])
        return recorded.rowCount > 0
    }

    /// Before a change of webhook `id`'s row: false when there is no such webhook. A transaction
    /// that holds no lock yet lets the change itself wait for the row; one that holds a lock
    /// takes the row first without waiting, and is deferred when another writer holds it.
    private func lockWebhook(id: String) throws(ModerationError) -> Bool {
        guard holdsLocks else { return true }
        if try connection.query(.lockWebhookSkipping, [.text(id)]).rowCount > 0 {
            locksHeld = true
            return true
        }
        // Skipped: another writer holds it — or there is no such webhook.
        guard try connection.query(.webhookExists, [.text(id)]).rowCount > 0 else { return false }
        throw webhookDeferral("webhook \(id)")
    }

    /// The refusal of a write whose webhook another writer holds (see `PostgresSession`).
    private func webhookDeferral(_ what: String) -> ModerationError {
        isDeferred = true
        return .storage("\(what) is being written by another writer; the write runs again in the next batch")
    }

    /// The parameters of `.insertWebhook` and `.updateWebhook`.
    private func parameters(_ stored: StoredWebhook) -> [PGValue] {
        let webhook = stored.webhook
        return [
            .int(stored.appID), .text(webhook.id), .text(webhook.url),
            .intArray(webhook.kinds.map { Int64(StorageCodes.code($0)) }), .textArray(webhook.guids),
            .text(webhook.description), .bool(webhook.enabled), .int(webhook.createdAt), .text(stored.secret),
            .int(stored.generation), .int(webhook.status.lastDeliveredSeq), .int(webhook.status.consecutiveFailures),
            .text(webhook.status.lastError), .int(webhook.status.nextAttemptAt), .int(webhook.status.failingSince),
        ]
    }

    /// A webhook row in the order of `Statement.webhookColumns`.
    private func decodeWebhook(_ rows: PGResult, _ row: Int) -> StoredWebhook {
        let status = WebhookStatus(
            lastDeliveredSeq: rows.uint64(row, 11), consecutiveFailures: rows.int(row, 12),
            lastError: rows.string(row, 13), nextAttemptAt: rows.int64(row, 14), failingSince: rows.int64(row, 15))
        let webhook = Webhook(
            id: rows.string(row, 2), url: rows.string(row, 3),
            kinds: rows.int64s(row, 4).map { StorageCodes.kind(Int($0)) }, guids: rows.strings(row, 5),
            description: rows.string(row, 6), enabled: rows.bool(row, 7), createdAt: rows.int64(row, 8),
            status: status)
        return StoredWebhook(
            appID: rows.int64(row, 0), app: rows.string(row, 1), webhook: webhook, secret: rows.string(row, 9),
            generation: rows.uint64(row, 10))
    }
}
