import TestSupport
import Testing
import WebhookDelivery

/// Standard Webhooks signing: the published reference vector, the secret's text form, and the
/// verification a receiver makes.
@Suite("WebhookSignature")
struct WebhookSignatureTests {
    /// The vector the Standard Webhooks reference libraries test against (also reproduced by
    /// Python's hmac in `WebhookReceiver`'s checks).
    @Test("The reference vector signs to the published signature")
    func referenceVector() throws {
        let secret = try WebhookSecret(parsing: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = WebhookSignature.sign(
            secret: secret, messageID: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(
            WebhookSignature.verify(
                header: "v1,bm9wZQ== \(signature)", secret: secret, messageID: "msg_p5jXN8AQM9LWM0D4loKWxJek",
                timestamp: 1_614_265_330, body: body))
    }

    @Test("A changed id, timestamp, body or secret fails verification")
    func tamperingFails() throws {
        let secret = WebhookSecret.generate()
        let body = Array(#"{"a":1}"#.utf8)
        let header = WebhookSignature.sign(secret: secret, messageID: "w_1_2", timestamp: 100, body: body)
        #expect(WebhookSignature.verify(header: header, secret: secret, messageID: "w_1_2", timestamp: 100, body: body))
        #expect(
            !WebhookSignature.verify(header: header, secret: secret, messageID: "w_1_3", timestamp: 100, body: body))
        #expect(
            !WebhookSignature.verify(header: header, secret: secret, messageID: "w_1_2", timestamp: 101, body: body))
        #expect(
            !WebhookSignature.verify(
                header: header, secret: secret, messageID: "w_1_2", timestamp: 100, body: Array(#"{"a":2}"#.utf8)))
        #expect(
            !WebhookSignature.verify(
                header: header, secret: .generate(), messageID: "w_1_2", timestamp: 100, body: body))
        #expect(
            !WebhookSignature.verify(
                header: "v2," + header.dropFirst(3), secret: secret, messageID: "w_1_2", timestamp: 100, body: body))
    }

    @Test("A generated secret is whsec_ and 32 random bytes, and reads back")
    func generatedSecret() throws {
        let secret = WebhookSecret.generate()
        #expect(secret.key.count == 32)
        #expect(secret.text.hasPrefix("whsec_"))
        #expect(secret.text.count == 6 + 44)
        #expect(try WebhookSecret(parsing: secret.text) == secret)
        #expect(WebhookSecret.generate() != secret)
    }

    @Test(
        "Texts that are not secrets",
        arguments: [
            ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", WebhookSecret.ParseError.missingPrefix),
            ("whsec_", .keyLength(0)),
            ("whsec_" + String(repeating: "A", count: 88), .keyLength(66)),
        ])
    func refusedSecrets(text: String, expected: WebhookSecret.ParseError) {
        #expect(throws: expected) { try WebhookSecret(parsing: text) }
    }

    @Test("A secret that is not base64 is refused")
    func notBase64() {
        #expect(throws: WebhookSecret.ParseError.self) { try WebhookSecret(parsing: "whsec_not base64!") }
    }
}
