public import WebhookDelivery

extension AddressGuard {
    /// The check `CreateWebhook` and `UpdateWebhook` make of a URL (the service's
    /// `Configuration.webhookURLCheck`): its scheme, then every address its host resolves to.
    /// Blocking (it resolves the host): the RPC layer runs it off the event loop.
    public var urlCheck: @Sendable (String) -> String? {
        let guarded = self
        return { url in
            guard let (refusal, address) = guarded.check(url: url) else { return nil }
            switch refusal {
            case .scheme:
                return guarded.allowsPrivateAddresses
                    ? "only http and https URLs are allowed" : "only https URLs are allowed"
            case .malformed, .unresolved:
                return refusal.rawValue
            default:
                let what = address.map { "it resolves to \($0): " } ?? ""
                return "\(what)\(refusal.rawValue) addresses are allowed only with --webhook-allow-private"
            }
        }
    }
}
