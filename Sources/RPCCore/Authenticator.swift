/// Decides which app an API key belongs to, at HELLO time.
public protocol Authenticator: Sendable {
    /// The app the key belongs to, or nil when the key is wrong. When `appID` is non-empty the
    /// key must belong to that app. Implementations compare keys in constant time.
    func authenticate(apiKey: String, appID: String) -> String?
}
