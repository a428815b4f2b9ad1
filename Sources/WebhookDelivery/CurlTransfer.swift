internal import CCurl
internal import Glibc

/// One webhook request as a curl easy handle, and what its end means.
///
/// Owned by the delivery thread. The easy handle points back at this object (the open-socket
/// callback's context, the body sink), so it lives until the handle is cleaned up in `deinit`.
final class CurlTransfer {
    /// What every transfer of a client shares: the configuration and the CA bundle.
    struct Settings {
        let configuration: WebhookClientConfiguration
        let addressGuard: AddressGuard
        /// The system's CA bundle followed by the extra CA file, when there is one.
        ///
        /// `CURLOPT_CAINFO` would replace the system bundle with the private CA, and whether
        /// `CURLOPT_CAINFO_BLOB` adds to the default bundle or replaces it has changed between
        /// curl versions and TLS backends; one blob holding both is the same on every version.
        /// Read once, when the client starts: a changed system bundle needs a restart.
        let caBundle: UnsafeMutableRawBufferPointer?

        init(configuration: WebhookClientConfiguration) throws(WebhookDeliveryError) {
            self.configuration = configuration
            addressGuard = AddressGuard(allowsPrivateAddresses: configuration.allowsPrivateAddresses)
            guard let extraCAFile = configuration.extraCAFile else {
                caBundle = nil
                return
            }
            guard let extra = Self.contents(of: extraCAFile) else {
                throw WebhookDeliveryError(code: .tls, message: "cannot read the CA file \(extraCAFile)")
            }
            let systemPath = mrpc_curl_version_info().pointee.cainfo.map { String(cString: $0) }
            var bundle = Self.contents(of: systemPath ?? "/etc/ssl/certs/ca-certificates.crt") ?? []
            bundle.append(UInt8(ascii: "\n"))
            bundle.append(contentsOf: extra)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bundle.count, alignment: 1)
            buffer.copyBytes(from: bundle)
            caBundle = buffer
        }

        func release() { caBundle?.deallocate() }

        private static func contents(of path: String) -> [UInt8]? {
            guard let file = fopen(path, "rb") else { return nil }
            defer { fclose(file) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = fread(&chunk, 1, chunk.count, file)
                if count == 0 { break }
                bytes.append(contentsOf: chunk[0..<count])
            }
            return ferror(file) == 0 ? bytes : nil
        }
    }

    let submission: DeliveryLoop.Submission
    let easy: UnsafeMutableRawPointer
    private let addressGuard: AddressGuard
    private let bodyLimit: Int
    private var headers: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let sink: UnsafeMutablePointer<mrpc_curl_body_sink>
    /// The first address the guard refused at connect, for the error's message.
    fileprivate var refusedAddress: (refusal: AddressGuard.Refusal, address: String)?
    private let started = ContinuousClock.now

    init(submission: DeliveryLoop.Submission, settings: Settings) throws(WebhookDeliveryError) {
        guard let easy = curl_easy_init() else {
            throw WebhookDeliveryError(code: .other, message: "curl_easy_init failed")
        }
        self.submission = submission
        self.easy = easy
        addressGuard = settings.addressGuard
        bodyLimit = settings.configuration.responseBodyLimit
        errorBuffer = .allocate(capacity: Int(MRPC_CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(MRPC_CURL_ERROR_SIZE))
        sink = .allocate(capacity: 1)
        sink.initialize(to: mrpc_curl_body_sink(received: 0, limit: settings.configuration.responseBodyLimit))
        try configure(settings: settings)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headers)
        errorBuffer.deallocate()
        sink.deallocate()
    }

    var elapsed: Duration { ContinuousClock.now - started }

    private func configure(settings: Settings) throws(WebhookDeliveryError) {
        let configuration = settings.configuration
        let request = submission.request
        var failed: CURLoption?
        func check(_ code: CURLcode, _ option: CURLoption) { if code != CURLE_OK, failed == nil { failed = option } }

        check(mrpc_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)
        check(mrpc_curl_setopt_str(easy, CURLOPT_URL, request.url), CURLOPT_URL)
        // Only the schemes the guard allows; redirects are not followed (curl's default, stated).
        let protocols = settings.addressGuard.allows(scheme: "http") ? "http,https" : "https"
        check(mrpc_curl_setopt_str(easy, CURLOPT_PROTOCOLS_STR, protocols), CURLOPT_PROTOCOLS_STR)
        check(mrpc_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), CURLOPT_FOLLOWLOCATION)
        // A proxy from the environment would make the guard check the proxy, not the receiver.
        check(mrpc_curl_setopt_str(easy, CURLOPT_PROXY, ""), CURLOPT_PROXY)
        check(mrpc_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1), CURLOPT_NOSIGNAL)
        check(mrpc_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), CURLOPT_HTTP_VERSION)
        // Wait for a connection being set up to the same receiver to say whether it multiplexes.
        check(mrpc_curl_setopt_long(easy, CURLOPT_PIPEWAIT, 1), CURLOPT_PIPEWAIT)
        check(
            mrpc_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(configuration.connectTimeout)),
            CURLOPT_CONNECTTIMEOUT_MS)
        check(
            mrpc_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(configuration.requestTimeout)),
            CURLOPT_TIMEOUT_MS)
        check(mrpc_curl_setopt_str(easy, CURLOPT_USERAGENT, configuration.userAgent), CURLOPT_USERAGENT)
        check(mrpc_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1), CURLOPT_SSL_VERIFYPEER)
        check(mrpc_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2), CURLOPT_SSL_VERIFYHOST)
        if let bundle = settings.caBundle {
            var blob = curl_blob(data: bundle.baseAddress, len: bundle.count, flags: UInt32(CURL_BLOB_NOCOPY))
            check(mrpc_curl_setopt_blob(easy, CURLOPT_CAINFO_BLOB, &blob), CURLOPT_CAINFO_BLOB)
        }

        // The body: copied by curl, so the request's array need not outlive this call.
        check(
            mrpc_curl_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)),
            CURLOPT_POSTFIELDSIZE_LARGE)
        if request.body.isEmpty {
            // A null pointer would make curl read the body from a callback: "" is an empty POST.
            check(mrpc_curl_setopt_str(easy, CURLOPT_COPYPOSTFIELDS, ""), CURLOPT_COPYPOSTFIELDS)
        } else {
            request.body.withUnsafeBytes { body in
                check(
                    mrpc_curl_setopt_ptr(
                        easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: body.baseAddress)),
                    CURLOPT_COPYPOSTFIELDS)
            }
        }
        for line in [
            "content-type: application/json",
            "webhook-id: \(request.messageID)",
            "webhook-timestamp: \(request.timestamp)",
            "webhook-signature: \(request.signature)",
            // curl asks for 100-continue before larger bodies: one round trip saved per batch.
            "Expect:",
        ] {
            headers = curl_slist_append(headers, line)
        }
        check(mrpc_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headers), CURLOPT_HTTPHEADER)
        check(mrpc_curl_setopt_discard_body(easy, sink), CURLOPT_WRITEFUNCTION)
        let context = Unmanaged.passUnretained(self).toOpaque()
        check(mrpc_curl_setopt_opensocket(easy, openGuardedSocket, context), CURLOPT_OPENSOCKETFUNCTION)
        if let failed {
            throw WebhookDeliveryError(code: .other, message: "curl refused option \(failed.rawValue)")
        }
    }

    /// What curl's `code` means for this request.
    func result(code: CURLcode) -> Result<WebhookResponse, WebhookDeliveryError> {
        var status = 0
        _ = mrpc_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        // A body past the limit is cut on purpose: the answer's status stands.
        let bodyCut = code == CURLE_WRITE_ERROR && sink.pointee.received > bodyLimit
        if code == CURLE_OK || (bodyCut && status > 0) {
            return .success(WebhookResponse(status: status, retryAfter: retryAfter(), httpVersion: httpVersion()))
        }
        let message =
            errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        if let refused = refusedAddress, code == CURLE_COULDNT_CONNECT {
            return .failure(
                WebhookDeliveryError(
                    code: .addressRefused, message: "\(refused.address) refused: \(refused.refusal.rawValue)"))
        }
        return .failure(WebhookDeliveryError(code: Self.errorCode(code), message: message))
    }

    private static func errorCode(_ code: CURLcode) -> WebhookDeliveryError.Code {
        switch code {
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: .invalidURL
        case CURLE_COULDNT_RESOLVE_HOST: .unresolved
        case CURLE_COULDNT_CONNECT: .connectFailed
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            .tls
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2,
            CURLE_HTTP2_STREAM, CURLE_PARTIAL_FILE:
            .protocolError
        default: .other
        }
    }

    /// The answer's `Retry-After` as seconds or an HTTP date (curl_getdate reads the formats
    /// RFC 9110 allows), nil when absent or unreadable.
    private func retryAfter() -> RetryAfter? {
        var header: UnsafeMutablePointer<curl_header>?
        guard curl_easy_header(easy, "Retry-After", 0, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK,
            let value = header?.pointee.value
        else { return nil }
        var text = Substring(String(cString: value))
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return Int64(text).map { .seconds($0) } ?? .seconds(Int64.max)
        }
        let date = curl_getdate(String(text), nil)
        return date == -1 ? nil : .date(unixSeconds: Int64(date))
    }

    private func httpVersion() -> String {
        var version = 0
        _ = mrpc_curl_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "2"
        case Int(CURL_HTTP_VERSION_3): return "3"
        default: return "?"
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// Called by the open-socket callback with the address curl is about to connect to.
    fileprivate func admit(_ address: [UInt8]) -> Bool {
        guard let refusal = addressGuard.refusal(of: address) else { return true }
        if refusedAddress == nil { refusedAddress = (refusal, AddressGuard.text(of: address)) }
        return false
    }
}

/// curl's open-socket callback: the SSRF guard on the address of every new connection (after
/// curl's own resolution, so a name that changes its answer is checked again at each connect).
private func openGuardedSocket(
    context: UnsafeMutableRawPointer?, purpose: curlsocktype, address: UnsafeMutablePointer<curl_sockaddr>?
) -> curl_socket_t {
    guard let context, let address else { return MRPC_CURL_SOCKET_BAD }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let socketAddress =
        UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    guard let bytes = AddressGuard.bytes(of: socketAddress), transfer.admit(bytes) else {
        return MRPC_CURL_SOCKET_BAD
    }
    let entry = address.pointee
    return socket(entry.family, entry.socktype | Int32(SOCK_CLOEXEC.rawValue), entry.protocol)
}
