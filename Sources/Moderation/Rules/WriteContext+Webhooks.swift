/// The writer's part of webhooks: creating, changing, deleting and replaying them. Webhooks are
/// the app's configuration, not moderation: their changes record no action.
extension WriteContext {
    /// Step 4 and the limit of `CreateWebhook`; the cursor starts at the app's last seq.
    mutating func createWebhook(_ webhook: Webhook, secret: String) throws(ModerationError) -> CreatedWebhook {
        try requireApp(toDo: "create webhooks")
        let appID = try ensureAppID()
        let count = try tx.webhooks(appID: appID).count
        let limit = ModerationService.maxWebhooksPerApp
        guard count < limit else {
            throw ModerationError(
                .rateLimited, "the app has \(count) webhooks, the limit; delete one first",
                details: ["limit": String(limit), "count": String(count)])
        }
        var created = webhook
        created.createdAt = now
        created.status = WebhookStatus(lastDeliveredSeq: try tx.logBounds(appID: appID).headSeq)
        try tx.insertWebhook(StoredWebhook(appID: appID, app: caller.app, webhook: created, secret: secret))
        return CreatedWebhook(webhook: created, secret: secret)
    }

    /// `UpdateWebhook`. Turning `enabled` on or off moves the webhook to a new generation, so
    /// that the outcome of a request in flight across the change is not recorded over it.
    mutating func updateWebhook(id: String, _ update: WebhookUpdate) throws(ModerationError) -> Webhook {
        var stored = try webhookForChange(id, toDo: "update webhooks")
        if let url = update.url { stored.webhook.url = url }
        if let kinds = update.kinds { stored.webhook.kinds = kinds }
        if let guids = update.guids { stored.webhook.guids = guids }
        if let description = update.description { stored.webhook.description = description }
        if let enabled = update.enabled, enabled != stored.webhook.enabled {
            stored.webhook.enabled = enabled
            stored.generation += 1
            if enabled {
                let cursor = stored.webhook.status.lastDeliveredSeq
                stored.webhook.status = WebhookStatus(lastDeliveredSeq: cursor)
            } else {
                stored.webhook.status.nextAttemptAt = 0
            }
        }
        try tx.updateWebhook(stored)
        return stored.webhook
    }

    mutating func deleteWebhook(id: String) throws(ModerationError) -> Webhook {
        let stored = try webhookForChange(id, toDo: "delete webhooks")
        try tx.deleteWebhook(appID: stored.appID, id: id)
        return stored.webhook
    }

    /// `ReplayWebhook`: the cursor set to `afterSeq`, failures cleared, a new generation.
    mutating func replayWebhook(id: String, afterSeq: UInt64) throws(ModerationError) -> Webhook {
        var stored = try webhookForChange(id, toDo: "replay webhooks")
        let bounds = try tx.logBounds(appID: stored.appID)
        if afterSeq < bounds.prunedThrough {
            throw ModerationError(
                .cursorExpired,
                "actions after seq \(afterSeq) are past retention; the oldest kept is \(bounds.oldestRetainedSeq)")
        }
        if afterSeq > bounds.headSeq {
            throw .invalid("after_seq", "\(afterSeq) is past the app's last action (seq \(bounds.headSeq))")
        }
        stored.webhook.status = WebhookStatus(lastDeliveredSeq: afterSeq)
        stored.generation += 1
        try tx.updateWebhook(stored)
        return stored.webhook
    }

    /// Step 4 of a change (the app only), then the webhook (`ERR_WEBHOOK_NOT_FOUND`).
    private mutating func webhookForChange(_ id: String, toDo what: String) throws(ModerationError) -> StoredWebhook {
        try requireApp(toDo: what)
        guard let appID = try appID(),
            let stored = try tx.webhooks(appID: appID).first(where: { $0.webhook.id == id })
        else { throw .webhookNotFound(id) }
        return stored
    }
}
