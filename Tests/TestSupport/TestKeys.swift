public import RPCCore

/// An authenticator with two known keys, for servers and sessions under test.
///
/// `Frames.apiKey` belongs to `Frames.appID` ("app1"); "key-of-app2" belongs to "app2". A key may
/// also be given as "APP_ID:KEY". Anything else is refused.
public struct TestKeys: Authenticator {
    public static let keys = [Frames.apiKey: Frames.appID, "key-of-app2": "app2"]

    public init() {}

    public func authenticate(apiKey: String, appID: String) -> String? {
        var key = Substring(apiKey)
        var claimed = appID
        if let colon = apiKey.firstIndex(of: ":") {
            let prefix = String(apiKey[..<colon])
            guard claimed.isEmpty || claimed == prefix else { return nil }
            claimed = prefix
            key = apiKey[apiKey.index(after: colon)...]
        }
        guard let app = Self.keys[String(key)], claimed.isEmpty || claimed == app else { return nil }
        return app
    }
}

/// The two apps `TestKeys` knows, as a test names them.
public enum TestApp: String, Sendable, CaseIterable {
    case one = "app1"
    case two = "app2"

    /// The API key of the app.
    public var apiKey: String {
        switch self {
        case .one: Frames.apiKey
        case .two: "key-of-app2"
        }
    }
}
