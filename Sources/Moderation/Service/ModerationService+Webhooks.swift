internal import ByteCoding
internal import CSodium

extension ModerationService {
    /// The most webhooks an app may have.
    static let maxWebhooksPerApp = 10
    /// The longest webhook URL, in bytes.
    static let maxWebhookURL = 2_048
    /// The most groups one webhook's filter names.
    static let maxWebhookGuids = 1_000

    /// Creates a webhook (`CreateWebhook`): the app only. Delivery starts after the app's
    /// current last seq.
    ///
    /// Order: arguments (`url` 1–2 048 bytes and allowed by `Configuration.webhookURLCheck`,
    /// which resolves the host: call it off the event loop; kinds; at most 1 000 guids, each
    /// valid and listed once; description ≤ 255; `secret` empty or `whsec_` and the base64 of
    /// 24–64 bytes) → the app only (`ERR_PERMISSION_DENIED`) → at most 10 webhooks per app
    /// (`ERR_RATE_LIMITED` with the limit in details). An empty `secret` is made here
    /// (`whsec_` and the base64 of 32 random bytes); the reply is the only place it is shown.
    public func createWebhook(
        _ caller: Caller, _ new: NewWebhook, replay: @escaping ReplayEncoder<CreatedWebhook>,
        completion: @escaping @Sendable (MutationResult<CreatedWebhook>) -> Void
    ) {
        submit(caller, replay: replay, completion: notifyingWebhookChange(completion)) {
            () throws(ModerationError) -> WriteBody<CreatedWebhook> in
            let url = try webhookURL(new.url)
            let guids = try Self.webhookGuids(new.guids, field: "guids")
            try Validation.text(new.description, field: "description", max: Validation.maxDescription)
            let secret = try new.secret.isEmpty ? Self.makeWebhookSecret() : Self.webhookSecret(new.secret)
            let webhook = Webhook(
                id: Self.makeWebhookID(), url: url, kinds: Self.distinct(new.kinds), guids: guids,
                description: new.description)
            return { (context: inout WriteContext) throws(ModerationError) -> CreatedWebhook in
                try context.createWebhook(webhook, secret: secret)
            }
        }
    }

    /// Changes a webhook's fields that `update` sets (`UpdateWebhook`): the app only; an id the
    /// app has no webhook under is `ERR_WEBHOOK_NOT_FOUND`. Enabling a disabled webhook clears
    /// its failures and resumes from its cursor; disabling it stops delivery where it is.
    public func updateWebhook(
        _ caller: Caller, id: String, _ update: WebhookUpdate, replay: @escaping ReplayEncoder<Webhook>,
        completion: @escaping @Sendable (MutationResult<Webhook>) -> Void
    ) {
        submit(caller, replay: replay, completion: notifyingWebhookChange(completion)) {
            () throws(ModerationError) -> WriteBody<Webhook> in
            let id = try Self.webhookID(id)
            guard !update.isEmpty else { throw .invalid("update_mask", "names no field to change") }
            var checked = update
            if let url = update.url { checked.url = try webhookURL(url) }
            if let guids = update.guids { checked.guids = try Self.webhookGuids(guids, field: "guids") }
            if let kinds = update.kinds { checked.kinds = Self.distinct(kinds) }
            if let description = update.description {
                try Validation.text(description, field: "description", max: Validation.maxDescription)
            }
            let change = checked
            return { (context: inout WriteContext) throws(ModerationError) -> Webhook in
                try context.updateWebhook(id: id, change)
            }
        }
    }

    /// Deletes a webhook (`DeleteWebhook`): the app only; `ERR_WEBHOOK_NOT_FOUND`.
    public func deleteWebhook(
        _ caller: Caller, id: String, replay: @escaping ReplayEncoder<Webhook>,
        completion: @escaping @Sendable (MutationResult<Webhook>) -> Void
    ) {
        submit(caller, replay: replay, completion: notifyingWebhookChange(completion)) {
            () throws(ModerationError) -> WriteBody<Webhook> in
            let id = try Self.webhookID(id)
            return { (context: inout WriteContext) throws(ModerationError) -> Webhook in
                try context.deleteWebhook(id: id)
            }
        }
    }

    /// Moves a webhook's cursor (`ReplayWebhook`): the app only; delivery goes on with the
    /// actions after `afterSeq` (again, for those delivered already), at once, its failures
    /// cleared. `afterSeq` older than the log's retention is `ERR_CURSOR_EXPIRED`; past the
    /// log's head, `ERR_INVALID_ARGUMENT`. A disabled webhook stays disabled until enabled.
    public func replayWebhook(
        _ caller: Caller, id: String, afterSeq: UInt64, replay: @escaping ReplayEncoder<Webhook>,
        completion: @escaping @Sendable (MutationResult<Webhook>) -> Void
    ) {
        submit(caller, replay: replay, completion: notifyingWebhookChange(completion)) {
            () throws(ModerationError) -> WriteBody<Webhook> in
            let id = try Self.webhookID(id)
            return { (context: inout WriteContext) throws(ModerationError) -> Webhook in
                try context.replayWebhook(id: id, afterSeq: afterSeq)
            }
        }
    }

    /// The app's webhooks with their status, oldest first (`ListWebhooks`): the app only.
    public func listWebhooks(_ caller: Caller) throws(ModerationError) -> [Webhook] {
        try read(caller) { (context: ReadContext) throws(ModerationError) -> [Webhook] in
            try context.caller.requireApp(toDo: "list webhooks")
            guard let appID = try context.appID() else { return [] }
            return try context.snapshot.webhooks(appID: appID).map(\.webhook)
        }
    }

    /// One webhook with its secret and app, for `TestWebhook`'s ping: the app only;
    /// `ERR_WEBHOOK_NOT_FOUND`.
    public func webhookToTest(_ caller: Caller, id: String) throws(ModerationError) -> StoredWebhook {
        let id = try Self.webhookID(id)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> StoredWebhook in
            try context.caller.requireApp(toDo: "test a webhook")
            guard let appID = try context.appID(),
                let stored = try context.snapshot.webhooks(appID: appID).first(where: { $0.webhook.id == id })
            else { throw .webhookNotFound(id) }
            return stored
        }
    }

    /// `url` trimmed of nothing, within bounds, and allowed by the configured check.
    private func webhookURL(_ url: String) throws(ModerationError) -> String {
        guard (1...Self.maxWebhookURL).contains(url.utf8.count) else {
            throw .invalid("url", "must be 1–\(Self.maxWebhookURL) bytes")
        }
        if let refusal = configuration.webhookURLCheck(url) { throw .invalid("url", "\(url) is refused: \(refusal)") }
        return url
    }

    private static func webhookGuids(_ guids: [String], field: String) throws(ModerationError) -> [String] {
        try Validation.identifiers(guids, field: field, allowEmpty: true, max: maxWebhookGuids, noun: "guids")
    }

    private static func webhookID(_ id: String) throws(ModerationError) -> String {
        guard !id.isEmpty else { throw .invalid("id", "is required") }
        guard id.utf8.count <= 64 else { throw .webhookNotFound(id) }
        return id
    }

    private static func distinct(_ kinds: [ActionKind]) -> [ActionKind] {
        var seen = Set<ActionKind>()
        return kinds.filter { seen.insert($0).inserted }
    }

    /// A secret the app gave: `whsec_` and the base64 of 24–64 bytes (as Standard Webhooks).
    private static func webhookSecret(_ secret: String) throws(ModerationError) -> String {
        guard secret.hasPrefix("whsec_"),
            let key = try? Base64.decode(String(secret.dropFirst(6))), (24...64).contains(key.count)
        else { throw .invalid("secret", "must be whsec_ and the base64 of 24–64 bytes, or empty for one made here") }
        return secret
    }

    private static func makeWebhookSecret() -> String {
        "whsec_" + Base64.encode(randomBytes(32))
    }

    /// `wh_` and 20 base-32 characters (100 random bits).
    private static func makeWebhookID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        return "wh_" + String(randomBytes(20).map { alphabet[Int($0 & 31)] })
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return bytes
    }
}
