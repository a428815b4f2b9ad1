/// An endpoint of the app's backend that receives the app's action log over HTTPS
/// (Standard Webhooks): which actions, and how their delivery stands.
public struct Webhook: Sendable, Equatable {
    /// `wh_` and 20 random base-32 characters; the first part of every `webhook-id` header.
    public var id: String
    public var url: String
    /// Only these kinds of action are delivered; empty for every kind.
    public var kinds: [ActionKind]
    /// Only the actions of these groups are delivered; empty for every group and the app's own.
    public var guids: [String]
    public var description: String
    /// False when the app turned the webhook off or delivery gave up on it (the reason is
    /// `status.lastError`); nothing is delivered until it is enabled again.
    public var enabled: Bool
    /// Unix milliseconds.
    public var createdAt: Int64
    public var status: WebhookStatus

    public init(
        id: String, url: String, kinds: [ActionKind] = [], guids: [String] = [], description: String = "",
        enabled: Bool = true, createdAt: Int64 = 0, status: WebhookStatus = WebhookStatus()
    ) {
        self.id = id
        self.url = url
        self.kinds = kinds
        self.guids = guids
        self.description = description
        self.enabled = enabled
        self.createdAt = createdAt
        self.status = status
    }

    /// `DISABLED` while not enabled, `FAILING` while the last attempt failed, else `ACTIVE`.
    public var state: WebhookState {
        if !enabled { return .disabled }
        return status.consecutiveFailures > 0 ? .failing : .active
    }

    /// Whether an action of `kind` in group `guid` ("" for the app's own actions) is delivered.
    public func delivers(kind: ActionKind, guid: String) -> Bool {
        (kinds.isEmpty || kinds.contains(kind)) && (guids.isEmpty || guids.contains(guid))
    }
}

/// Where a webhook's delivery stands.
public enum WebhookState: Sendable, Equatable {
    case active
    case failing
    case disabled
}

/// A webhook's delivery progress: the durable cursor and the failures since the last success.
public struct WebhookStatus: Sendable, Equatable {
    /// The cursor: every action of the app up to this seq was delivered (or filtered out).
    public var lastDeliveredSeq: UInt64
    /// Attempts in a row that did not get a 2xx; 0 after a success.
    public var consecutiveFailures: Int
    /// Why the last attempt failed, or why the webhook was disabled; empty when none did.
    public var lastError: String
    /// Unix milliseconds of the next attempt after a failure; 0 when delivery is not waiting.
    public var nextAttemptAt: Int64
    /// Unix milliseconds of the first failure of the current run of failures; 0 when none.
    public var failingSince: Int64

    public init(
        lastDeliveredSeq: UInt64 = 0, consecutiveFailures: Int = 0, lastError: String = "", nextAttemptAt: Int64 = 0,
        failingSince: Int64 = 0
    ) {
        self.lastDeliveredSeq = lastDeliveredSeq
        self.consecutiveFailures = consecutiveFailures
        self.lastError = lastError
        self.nextAttemptAt = nextAttemptAt
        self.failingSince = failingSince
    }
}

/// What `CreateWebhook` gives.
public struct NewWebhook: Sendable, Equatable {
    public var url: String
    public var kinds: [ActionKind]
    public var guids: [String]
    public var description: String
    /// `whsec_` and the base64 of 24–64 bytes; empty: the server makes one.
    public var secret: String

    public init(
        url: String, kinds: [ActionKind] = [], guids: [String] = [], description: String = "", secret: String = ""
    ) {
        self.url = url
        self.kinds = kinds
        self.guids = guids
        self.description = description
        self.secret = secret
    }
}

/// What `UpdateWebhook` changes: each field that is set (the request's `update_mask`).
public struct WebhookUpdate: Sendable, Equatable {
    public var url: String?
    public var kinds: [ActionKind]?
    public var guids: [String]?
    public var description: String?
    public var enabled: Bool?

    public init(
        url: String? = nil, kinds: [ActionKind]? = nil, guids: [String]? = nil, description: String? = nil,
        enabled: Bool? = nil
    ) {
        self.url = url
        self.kinds = kinds
        self.guids = guids
        self.description = description
        self.enabled = enabled
    }

    public var isEmpty: Bool { url == nil && kinds == nil && guids == nil && description == nil && enabled == nil }
}

/// A webhook just created, with its secret: the only time the secret is shown.
public struct CreatedWebhook: Sendable, Equatable {
    public var webhook: Webhook
    public var secret: String
}
