internal import Moderation
internal import WebhookDelivery

/// One webhook's delivery as the dispatcher thread drives it: at most one request in flight,
/// then the outcome recorded in the store before the next batch, so that a crash repeats at
/// most the batch that was in flight.
struct WebhookRunner {
    /// Where a webhook's delivery is between two of the dispatcher's turns.
    enum Phase: Equatable {
        /// Nothing in flight: the next turn may read the log or retry the pending batch.
        case idle
        /// `pending` was submitted as request `attempt`.
        case sending(attempt: UInt64, generation: UInt64)
        /// The outcome of a request is being written to the store (write `attempt`).
        case recording(attempt: UInt64, outcome: Outcome)
    }

    /// What a recorded outcome does to the runner once durable.
    struct Outcome: Equatable {
        var status: WebhookStatus
        var enabled: Bool
        /// The batch was delivered (or filtered out): the next turn reads after the new cursor.
        var clearsPending: Bool
    }

    /// A batch read from the log: sent, and sent again byte for byte until a 2xx.
    struct PendingBatch {
        let batch: WebhookBatch
        /// The cursor once the batch is delivered: its last seq, or the end of the stretch of the
        /// log it was read from when every action of that stretch the filters kept is in it.
        let advanceTo: UInt64
    }

    /// The webhook as last read from the store (settings, secret, generation).
    var stored: StoredWebhook
    /// Durable progress and failures, as this server last recorded or read them.
    var status: WebhookStatus
    var phase = Phase.idle
    var pending: PendingBatch?
    /// The log may have actions after the cursor this runner has not read.
    var mayHaveWork = true
    /// Deleted in the store: dropped once nothing is in flight.
    var removed = false
    /// Whether this server holds the lease, and until when it may act on it (Unix ms).
    var leased = false
    var statistics: WebhookDeliveryStatistics

    init(_ stored: StoredWebhook) {
        self.stored = stored
        status = stored.webhook.status
        statistics = WebhookDeliveryStatistics(app: stored.app, id: stored.webhook.id, state: stored.webhook.state)
    }

    var id: String { stored.webhook.id }

    /// Takes what the store holds now. Settings always; progress only when this server does not
    /// hold the lease (another server's progress) or the app moved the cursor (a new generation).
    mutating func update(from fresh: StoredWebhook) {
        let newGeneration = fresh.generation != stored.generation
        stored = fresh
        if newGeneration || !leased || !fresh.webhook.enabled {
            status = fresh.webhook.status
            pending = nil
            mayHaveWork = true
        }
    }

    /// The webhook with the status this server knows.
    var webhook: Webhook {
        var webhook = stored.webhook
        webhook.status = status
        return webhook
    }
}
