import Glibc
import TestSupport
import Testing
import WebhookDelivery

/// The delivery client against a real local receiver (`WebhookReceiver`): what goes on the wire,
/// how answers and failures are reported, connection reuse, order per key, the SSRF guard at
/// connect, TLS under a private CA, and a submitter that never waits for the network.
@Suite("WebhookClient")
struct WebhookClientTests {
    let secret = WebhookSecret.generate()

    private func client(
        allowsPrivateAddresses: Bool = true, extraCAFile: String? = nil, requestTimeout: Duration = .seconds(15)
    ) throws -> WebhookClient {
        var configuration = WebhookClientConfiguration()
        configuration.allowsPrivateAddresses = allowsPrivateAddresses
        configuration.extraCAFile = extraCAFile
        configuration.connectTimeout = .seconds(2)
        configuration.requestTimeout = requestTimeout
        return try WebhookClient(configuration: configuration)
    }

    private func request(_ url: String, id: String = "wh_1_1_1", body: String = #"{"n":1}"#) -> WebhookRequest {
        WebhookRequest(url: url, messageID: id, timestamp: 1_700_000_000, body: Array(body.utf8), secret: secret)
    }

    @Test("A POST carries the body, content-type and webhook-* headers, and its signature verifies at the receiver")
    func delivers() throws {
        let receiver = try WebhookReceiver(secret: secret.text)
        let client = try client()
        let recorder = CompletionRecorder()
        let number = client.submit(
            request(receiver.url("/ok"), id: "wh_7_10_12", body: #"{"type":"moderation.actions"}"#), key: "wh",
            completion: recorder.callback)
        let completion = try #require(recorder.wait(for: 1).first)
        #expect(completion.submission == number)
        #expect(completion.key == "wh")
        #expect(try completion.result.get() == WebhookResponse(status: 200, retryAfter: nil, httpVersion: "1.1"))
        #expect(completion.elapsed > .zero)
        let record = try #require(receiver.records().first)
        #expect(record.path == "/ok")
        #expect(record.messageID == "wh_7_10_12")
        #expect(record.timestamp == "1700000000")
        #expect(record.contentType == "application/json")
        #expect(record.body == #"{"type":"moderation.actions"}"#)
        #expect(record.signatureValid)

        client.submit(request(receiver.url("/ok"), id: "wh_empty", body: ""), key: "wh", completion: recorder.callback)
        #expect(recorder.wait(for: 1).count == 2)
        let empty = try #require(receiver.records().last)
        #expect(empty.messageID == "wh_empty")
        #expect(empty.body.isEmpty)
        #expect(empty.signatureValid)
    }

    @Test("Retry-After is read as seconds (503) and as an HTTP date (429); 410 is reported as it is")
    func statusesAndRetryAfter() throws {
        let receiver = try WebhookReceiver(secret: secret.text)
        let client = try client()
        let recorder = CompletionRecorder()
        client.submit(request(receiver.url("/unavailable")), key: "a", completion: recorder.callback)
        client.submit(request(receiver.url("/throttled")), key: "b", completion: recorder.callback)
        client.submit(request(receiver.url("/gone")), key: "c", completion: recorder.callback)
        let completions = recorder.wait(for: 3)
        let byKey = Dictionary(uniqueKeysWithValues: completions.map { ($0.key, $0.result) })
        #expect(try byKey["a"]?.get() == WebhookResponse(status: 503, retryAfter: .seconds(7)))
        #expect(try byKey["b"]?.get() == WebhookResponse(status: 429, retryAfter: .date(unixSeconds: 1_445_412_480)))
        #expect(try byKey["c"]?.get() == WebhookResponse(status: 410, retryAfter: nil))
    }

    @Test("A refused connect and a request past its timeout are errors with curl's message")
    func failures() throws {
        let receiver = try WebhookReceiver(secret: secret.text)
        let client = try client(requestTimeout: .milliseconds(400))
        let recorder = CompletionRecorder()
        client.submit(
            request("http://127.0.0.1:\(Self.closedPort())/ok"), key: "refused", completion: recorder.callback)
        client.submit(request(receiver.url("/slow/3000")), key: "slow", completion: recorder.callback)
        let completions = recorder.wait(for: 2)
        let byKey = Dictionary(uniqueKeysWithValues: completions.map { ($0.key, $0) })
        let refused = try #require(byKey["refused"])
        #expect(throws: WebhookDeliveryError.self) { try refused.result.get() }
        if case .failure(let error) = refused.result {
            #expect(error.code == .connectFailed)
            #expect(!error.message.isEmpty)
        }
        let slow = try #require(byKey["slow"])
        if case .failure(let error) = slow.result {
            #expect(error.code == .timedOut, "\(error)")
            #expect(error.message.contains("imeout") || error.message.contains("timed out"), "\(error)")
        } else {
            Issue.record("a request past its timeout succeeded: \(slow.result)")
        }
        #expect(slow.elapsed < .seconds(2))
    }

    @Test("Requests of one key go one at a time in submission order; their completions keep that order")
    func orderPerKey() throws {
        let receiver = try WebhookReceiver(secret: secret.text)
        let client = try client()
        let recorder = CompletionRecorder()
        let paths = ["/slow/300", "/slow/10", "/slow/150", "/ok"]
        let numbers = paths.map { client.submit(request(receiver.url($0)), key: "wh", completion: recorder.callback) }
        let completions = recorder.wait(for: paths.count)
        #expect(completions.map(\.submission) == numbers)
        #expect(receiver.records().map(\.path) == paths)
    }

    @Test("Sequential requests to one endpoint reuse one kept-alive connection")
    func keepAlive() throws {
        let receiver = try WebhookReceiver(secret: secret.text)
        let client = try client()
        let recorder = CompletionRecorder()
        for index in 0..<5 {
            client.submit(request(receiver.url("/ok"), id: "wh_\(index)"), key: "wh", completion: recorder.callback)
        }
        let completions = recorder.wait(for: 5)
        #expect(completions.allSatisfy { (try? $0.result.get().status) == 200 })
        #expect(Set(receiver.records().map(\.connection)).count == 1)
        #expect(receiver.connectionCount() == 1)
    }

    @Test("A large response body is cut at the limit and the status still counts")
    func bigBody() throws {
        let receiver = try WebhookReceiver(secret: secret.text)
        let client = try client()
        let recorder = CompletionRecorder()
        client.submit(request(receiver.url("/big")), key: "wh", completion: recorder.callback)
        let completion = try #require(recorder.wait(for: 1).first)
        #expect(try completion.result.get().status == 200)
    }

    @Test("Submitting returns at once while the receiver sleeps; the completion comes later")
    func submitterNeverBlocks() throws {
        let receiver = try WebhookReceiver(secret: secret.text)
        let client = try client()
        let recorder = CompletionRecorder()
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0..<20 {
            client.submit(request(receiver.url("/slow/1000")), key: "wh\(index % 2)", completion: recorder.callback)
        }
        #expect(clock.now - started < .milliseconds(100))
        #expect(recorder.wait(for: 1, milliseconds: 0).isEmpty)
        #expect(recorder.wait(for: 1).count == 1)
        client.shutdown()
        let completions = recorder.wait(for: 19)
        #expect(completions.count == 20)
        #expect(
            completions.filter { if case .failure(let error) = $0.result { error.code == .cancelled } else { false } }
                .count >= 17)
    }

    @Test("Without the private-address flag, 127.0.0.1 is refused at connect and http:// is refused outright")
    func refusesLoopback() throws {
        let receiver = try WebhookReceiver(secret: secret.text, tls: true)
        let client = try client(allowsPrivateAddresses: false, extraCAFile: receiver.caFile)
        let recorder = CompletionRecorder()
        client.submit(request(receiver.url("/ok")), key: "https", completion: recorder.callback)
        client.submit(request("http://127.0.0.1:\(receiver.port)/ok"), key: "http", completion: recorder.callback)
        let completions = recorder.wait(for: 2)
        let byKey = Dictionary(uniqueKeysWithValues: completions.map { ($0.key, $0.result) })
        guard case .failure(let refused) = byKey["https"] else {
            Issue.record("loopback was not refused: \(String(describing: byKey["https"]))")
            return
        }
        #expect(refused.code == .addressRefused)
        #expect(refused.message == "127.0.0.1 refused: loopback")
        guard case .failure(let plain) = byKey["http"] else {
            Issue.record("http was not refused")
            return
        }
        #expect(plain.code == .invalidURL)
        #expect(receiver.connectionCount() == 0)
        #expect(receiver.records().isEmpty)
    }

    @Test("TLS verifies against the extra CA file, and without it the private CA's certificate is refused")
    func tlsWithExtraCA() throws {
        let receiver = try WebhookReceiver(secret: secret.text, tls: true)
        let trusting = try client(extraCAFile: receiver.caFile)
        let systemOnly = try client()
        let recorder = CompletionRecorder()
        trusting.submit(request(receiver.url("/ok")), key: "trusting", completion: recorder.callback)
        systemOnly.submit(request(receiver.url("/ok")), key: "system", completion: recorder.callback)
        let completions = recorder.wait(for: 2)
        let byKey = Dictionary(uniqueKeysWithValues: completions.map { ($0.key, $0.result) })
        #expect(try byKey["trusting"]?.get().status == 200)
        guard case .failure(let error) = byKey["system"] else {
            Issue.record("a certificate of an untrusted CA was accepted")
            return
        }
        #expect(error.code == .tls, "\(error)")
        #expect(receiver.records().count == 1)
        #expect(receiver.records().first?.signatureValid == true)
    }

    @Test("Over TLS, HTTP/2 is used where the receiver offers it; otherwise HTTP/1.1")
    func http2() throws {
        let certificates = try WebhookReceiver(secret: secret.text, tls: true)
        let server = try HTTP2Receiver(
            port: Self.closedPort(), certificateFile: certificates.certificateFile, keyFile: certificates.keyFile)
        let client = try client(extraCAFile: certificates.caFile)
        let recorder = CompletionRecorder()
        for _ in 0..<3 { client.submit(request(server.url("/hook")), key: "h2", completion: recorder.callback) }
        client.submit(request(certificates.url("/ok")), key: "h1", completion: recorder.callback)
        let completions = recorder.wait(for: 4)
        let responses = completions.map { ($0.key, try? $0.result.get()) }
        #expect(responses.filter { $0.0 == "h2" }.map { $0.1?.httpVersion } == ["2", "2", "2"], "\(completions)")
        #expect(responses.filter { $0.0 == "h2" }.allSatisfy { $0.1?.status == 200 })
        #expect(responses.first { $0.0 == "h1" }?.1?.httpVersion == "1.1")
    }

    @Test("An extra CA file that cannot be read fails the client's start")
    func unreadableCAFile() {
        #expect(throws: WebhookDeliveryError.self) { try client(extraCAFile: "/nonexistent/ca.pem") }
    }

    /// A local port nothing listens on: bound, then closed.
    private static func closedPort() -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length)
                return getsockname(descriptor, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
