/// A webhook as the store keeps it: the app's view, its secret, and what delivery needs to
/// move its cursor safely when several servers share the store.
public struct StoredWebhook: Sendable, Equatable {
    public var appID: Int64
    /// The app's name (the `data.app` of every delivery).
    public var app: String
    public var webhook: Webhook
    /// `whsec_…`: what deliveries are signed with; never shown after creation.
    public var secret: String
    /// Counts the moves of the cursor made by the app (`ReplayWebhook`, re-enabling): a delivery
    /// records its progress only if the generation it read is still current, so a batch in
    /// flight across a replay cannot move the cursor back past it.
    public var generation: UInt64

    public init(appID: Int64, app: String, webhook: Webhook, secret: String, generation: UInt64 = 0) {
        self.appID = appID
        self.app = app
        self.webhook = webhook
        self.secret = secret
        self.generation = generation
    }
}
