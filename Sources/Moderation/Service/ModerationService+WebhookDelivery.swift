internal import Synchronization

/// What webhook delivery needs of the service: the webhooks to deliver, and the writes that
/// hold a webhook's lease and move its cursor. They go through the store's writer like any
/// change (each a few rows), so they commit in the writer's batches beside the app's calls.
extension ModerationService {
    /// Every webhook of every app, enabled or not, with its secret and generation.
    public func allWebhooks() throws(ModerationError) -> [StoredWebhook] {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> [StoredWebhook] in
            try snapshot.allWebhooks()
        }
    }

    /// Takes or renews the leases of webhooks `ids` for `owner`, for `durationMs` from now;
    /// completes with the ids `owner` holds afterwards.
    public func claimWebhookLeases(
        _ ids: [String], owner: String, durationMs: Int64,
        completion: @escaping @Sendable (Result<Set<String>, ModerationError>) -> Void
    ) {
        let now = clock()
        store.submit(
            StoreTask(completion: completion) { (tx: any StoreTransaction) throws(ModerationError) -> Set<String> in
                var held = Set<String>()
                for id in ids
                where try tx.claimWebhookLease(id: id, owner: owner, now: now, expiresAt: now + durationMs) {
                    held.insert(id)
                }
                return held
            })
    }

    /// Records a delivery's outcome when `owner` still holds the webhook's lease and nothing
    /// moved its cursor since `generation`; completes with whether it was recorded.
    public func recordWebhookDelivery(
        id: String, owner: String, generation: UInt64, status: WebhookStatus, enabled: Bool,
        completion: @escaping @Sendable (Result<Bool, ModerationError>) -> Void
    ) {
        store.submit(
            StoreTask(completion: completion) { (tx: any StoreTransaction) throws(ModerationError) -> Bool in
                try tx.recordWebhookDelivery(
                    id: id, owner: owner, generation: generation, status: status, enabled: enabled)
            })
    }

    /// Gives up `owner`'s leases (a server stopping), so another server takes over at once.
    public func releaseWebhookLeases(
        owner: String, completion: @escaping @Sendable (Result<Void, ModerationError>) -> Void
    ) {
        store.submit(
            StoreTask(completion: completion) { (tx: any StoreTransaction) throws(ModerationError) in
                try tx.releaseWebhookLeases(owner: owner)
            })
    }

    /// Calls `listener` after each webhook change committed through this service (created,
    /// updated, deleted, replayed), so that delivery here acts at once rather than at its next
    /// read of the store; changes through other servers are seen there.
    public func addWebhookChangeListener(_ listener: @escaping @Sendable () -> Void) {
        webhookChangeListeners.withLock { $0.append(listener) }
    }

    /// `completion`, then the webhook change listeners when the change was made.
    func notifyingWebhookChange<Value: Sendable>(
        _ completion: @escaping @Sendable (MutationResult<Value>) -> Void
    ) -> @Sendable (MutationResult<Value>) -> Void {
        { [weak self] outcome in
            completion(outcome)
            guard case .done(.success, _) = outcome, let self else { return }
            for listener in webhookChangeListeners.withLock({ $0 }) { listener() }
        }
    }

    /// The service's clock (Unix milliseconds).
    public var now: Int64 { clock() }
}

/// A write that runs one closure and reports its value once durable.
private final class StoreTask<Value: Sendable>: StoreWrite, Sendable {
    private let body: @Sendable (any StoreTransaction) throws(ModerationError) -> Value
    private let completion: @Sendable (Result<Value, ModerationError>) -> Void
    /// The value of the last `apply` (the store may run it again when it redoes a batch).
    private let value = Mutex<Value?>(nil)

    init(
        completion: @escaping @Sendable (Result<Value, ModerationError>) -> Void,
        _ body: @escaping @Sendable (any StoreTransaction) throws(ModerationError) -> Value
    ) {
        self.body = body
        self.completion = completion
    }

    func apply(_ transaction: any StoreTransaction) throws(ModerationError) {
        let result = try body(transaction)
        value.withLock { $0 = result }
    }

    func finish(_ failure: ModerationError?) {
        if let failure { return completion(.failure(failure)) }
        guard let result = value.withLock({ $0 }) else {
            return completion(.failure(ModerationError(.internal, "a store task finished without running")))
        }
        completion(.success(result))
    }
}
