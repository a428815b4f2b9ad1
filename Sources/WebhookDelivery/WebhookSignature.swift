public import ByteCoding
internal import COpenSSL

/// A webhook's signing secret as Standard Webhooks writes it: `whsec_` and the base64 of the key.
///
/// The key bytes, not the text, are what HMAC-SHA256 is keyed with, so a receiver using any
/// Standard Webhooks library verifies what this engine signs.
public struct WebhookSecret: Sendable, Equatable {
    /// Why a text is not a signing secret.
    public enum ParseError: Error, Equatable, Sendable {
        /// The text does not start with `whsec_`.
        case missingPrefix
        /// What follows `whsec_` is not padded standard base64.
        case notBase64(Base64.Failure)
        /// The key is empty or longer than 64 bytes (HMAC-SHA256's block: longer keys are hashed).
        case keyLength(Int)
    }

    static let prefix = "whsec_"

    /// The HMAC key.
    public let key: [UInt8]

    /// The secret as shown once to the app: `whsec_` + base64 of the key.
    public var text: String { Self.prefix + Base64.encode(key) }

    public init(key: [UInt8]) { self.key = key }

    /// Reads `whsec_…`.
    /// - Throws: `ParseError` when the prefix is missing or the rest is not a key.
    public init(parsing text: String) throws(ParseError) {
        guard text.hasPrefix(Self.prefix) else { throw .missingPrefix }
        let encoded = String(text.dropFirst(Self.prefix.count))
        let key: [UInt8]
        do { key = try Base64.decode(encoded) } catch { throw .notBase64(error) }
        guard (1...64).contains(key.count) else { throw .keyLength(key.count) }
        self.key = key
    }

    /// A new secret of 32 bytes from OpenSSL's CSPRNG, as CreateWebhook makes one.
    public static func generate() -> WebhookSecret {
        var key = [UInt8](repeating: 0, count: 32)
        let made = key.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        // RAND_bytes fails only when the system's entropy source does: nothing to sign with then.
        precondition(made == 1, "RAND_bytes failed: no entropy source for webhook secrets")
        return WebhookSecret(key: key)
    }
}

/// Standard Webhooks' request signature: `v1,` + base64(HMAC-SHA256(key, "id.timestamp.body")).
///
/// The timestamp is signed with the body so a captured request cannot be replayed later with a
/// fresh `webhook-timestamp`; receivers refuse stale timestamps.
public enum WebhookSignature {
    /// The `webhook-signature` header value for one request.
    /// - Parameters:
    ///   - messageID: the `webhook-id` header (the same for every retry of a batch).
    ///   - timestamp: the `webhook-timestamp` header, Unix seconds of this attempt.
    ///   - body: the request body, byte for byte as sent.
    public static func sign(secret: WebhookSecret, messageID: String, timestamp: Int64, body: [UInt8]) -> String {
        "v1," + Base64.encode(mac(secret: secret, messageID: messageID, timestamp: timestamp, body: body))
    }

    /// Whether `header` (space-separated `version,signature` pairs, as a receiver gets it) holds a
    /// `v1` signature of this request under `secret`; compared in constant time.
    public static func verify(
        header: String, secret: WebhookSecret, messageID: String, timestamp: Int64, body: [UInt8]
    ) -> Bool {
        let expected = mac(secret: secret, messageID: messageID, timestamp: timestamp, body: body)
        for entry in header.split(separator: " ") {
            let parts = entry.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1", let given = try? Base64.decode(String(parts[1])),
                given.count == expected.count
            else { continue }
            let same = given.withUnsafeBytes { a in
                expected.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
            }
            if same { return true }
        }
        return false
    }

    private static func mac(secret: WebhookSecret, messageID: String, timestamp: Int64, body: [UInt8]) -> [UInt8] {
        var signed = Array("\(messageID).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        secret.key.withUnsafeBufferPointer { key in
            signed.withUnsafeBufferPointer { data in
                digest.withUnsafeMutableBufferPointer { out in
                    _ = HMAC(
                        EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress, data.count,
                        out.baseAddress, &length)
                }
            }
        }
        return digest
    }
}
