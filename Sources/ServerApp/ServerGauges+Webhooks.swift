import Moderation
import ModerationWebhooks

extension ServerGauges {
    /// Each webhook this server knows: its state, whether this server delivers it, its requests
    /// by result, the actions delivered, and how far behind the app's log it is. Family by
    /// family, as the exposition format wants each family's samples together.
    static func webhookSamples(_ webhooks: [WebhookDeliveryStatistics], now: Int64) -> [ServerMetrics.Sample] {
        func each(
            _ name: String, _ type: String, _ help: String,
            _ values: (WebhookDeliveryStatistics) -> [(labels: [(String, String)], value: Double)]
        ) -> [ServerMetrics.Sample] {
            webhooks.flatMap { webhook in
                values(webhook).map {
                    ServerMetrics.Sample(
                        name: name, help: help, type: type,
                        labels: [("app", webhook.app), ("webhook", webhook.id)] + $0.labels, value: $0.value)
                }
            }
        }
        let states: [(WebhookState, String)] = [(.active, "active"), (.failing, "failing"), (.disabled, "disabled")]
        return each(
            "moderation_webhook_state", "gauge",
            "1 for the state each webhook is in (active, failing, disabled), else 0."
        ) { webhook in states.map { ([("state", $0.1)], webhook.state == $0.0 ? 1 : 0) } }
            + each("moderation_webhook_leased", "gauge", "1 when this server holds the webhook's lease (delivers it).")
        {
            [([], $0.leased ? 1 : 0)]
        }
            + each(
                "moderation_webhook_deliveries_total", "counter",
                "Webhook requests this server made, by result (delivered: a 2xx; failed: any other answer or none)."
            ) { [([("result", "delivered")], Double($0.delivered)), ([("result", "failed")], Double($0.failed))] }
            + each(
                "moderation_webhook_actions_delivered_total", "counter",
                "Actions in the webhook requests this server had answered with a 2xx."
            ) { [([], Double($0.actionsDelivered))] }
            + each(
                "moderation_webhook_lag_seqs", "gauge",
                "Actions of the app's log after the webhook's cursor, as far as this server knows the log."
            ) { [([], Double($0.lagSeqs))] }
            + each(
                "moderation_webhook_lag_seconds", "gauge",
                "Age of the oldest action the webhook has not delivered yet; 0 when caught up."
            ) { webhook in
                let age = webhook.oldestUndeliveredAt > 0 ? Double(max(0, now - webhook.oldestUndeliveredAt)) / 1000 : 0
                return [([], age)]
            }
    }
}
