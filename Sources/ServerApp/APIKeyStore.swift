internal import CSodium
public import RPCCore
import Synchronization

/// The API keys the server accepts, by app, checked in constant time.
///
/// Each configured key is kept only as a BLAKE2b digest of its two accepted forms (the bare key
/// and "APP_ID:KEY"); a presented key is hashed once and compared with every digest using
/// libsodium's constant-time compare, without stopping at the first match, so neither the key's
/// length nor how much of it matched shows in the timing. `replace` swaps the set atomically
/// (SIGHUP reload) without touching open connections.
public final class APIKeyStore: Authenticator {
    /// One configured key.
    public struct Entry: Sendable, Equatable {
        public var appID: String
        public var key: String

        public init(appID: String, key: String) {
            self.appID = appID
            self.key = key
        }
    }

    private struct Digests: Sendable {
        var entries: [(app: String, bare: [UInt8], qualified: [UInt8])] = []
    }

    private let digests = Mutex(Digests())

    public init(_ entries: [Entry]) {
        _ = sodium_init()
        replace(entries)
    }

    /// Replaces every key at once.
    public func replace(_ entries: [Entry]) {
        let computed = entries.map { ($0.appID, Self.digest($0.key), Self.digest("\($0.appID):\($0.key)")) }
        digests.withLock { $0.entries = computed }
    }

    /// The apps that have at least one key.
    public var appIDs: [String] { digests.withLock { Array(Set($0.entries.map(\.app))).sorted() } }

    public func authenticate(apiKey: String, appID: String) -> String? {
        guard !apiKey.isEmpty else { return nil }
        let presented = Self.digest(apiKey)
        var match: String?
        let entries = digests.withLock { $0.entries }
        for entry in entries {
            let bare = sodium_memcmp(presented, entry.bare, 32) == 0
            let qualified = sodium_memcmp(presented, entry.qualified, 32) == 0
            if (bare || qualified) && match == nil { match = entry.app }
        }
        guard let match, appID.isEmpty || appID == match else { return nil }
        return match
    }

    private static func digest(_ text: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var text = text
        text.withUTF8 { bytes in
            _ = crypto_generichash(&out, 32, bytes.baseAddress, UInt64(bytes.count), nil, 0)
        }
        return out
    }

    /// Parses "APP_ID:KEY" (the app id is everything before the first colon).
    public static func parseEntry(_ text: String) -> Entry? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let app = String(text[..<colon])
        let key = String(text[text.index(after: colon)...])
        guard isValidAppID(app), key.count >= 8, !key.contains(where: { $0.isWhitespace }) else { return nil }
        return Entry(appID: app, key: key)
    }

    /// App ids: 1–64 characters of [A-Za-z0-9_.-].
    public static func isValidAppID(_ app: String) -> Bool {
        !app.isEmpty && app.count <= 64
            && app.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    || $0 == "-" || $0 == "."
            }
    }

    /// A new random key: 32 bytes as 64 hex characters.
    public static func randomKey() -> String {
        _ = sodium_init()
        var bytes = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&bytes, 32)
        return bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
