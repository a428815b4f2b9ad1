internal import CCurl
internal import Glibc
internal import Synchronization

/// The delivery thread's side of `WebhookClient`: the multi handle, transfers in flight, and the
/// queue of each key.
///
/// `@unchecked Sendable`: other threads touch only the inbox (behind its mutex) and call
/// `curl_multi_wakeup`, which libcurl documents as callable from any thread; everything else is
/// the delivery thread's (`run`). The multi handle lives until this object is released, after the
/// thread has ended.
final class DeliveryLoop: @unchecked Sendable {
    struct Submission {
        let number: UInt64
        let key: String
        let request: WebhookRequest
        let completion: @Sendable (WebhookCompletion) -> Void
    }

    private struct Inbox {
        var submissions: [Submission] = []
        var nextSubmission: UInt64 = 1
        var stopping = false
    }

    private static let globalSetup: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    private let inbox = Mutex(Inbox())
    private let multi: UnsafeMutableRawPointer
    private let settings: CurlTransfer.Settings
    /// Transfers on the wire, by their easy handle.
    private var inFlight: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Submissions waiting for the transfer of the same key to end, oldest first.
    private var waiting: [String: [Submission]] = [:]
    private var busyKeys: Set<String> = []

    init(configuration: WebhookClientConfiguration) throws(WebhookDeliveryError) {
        guard Self.globalSetup, let multi = curl_multi_init() else {
            throw WebhookDeliveryError(code: .other, message: "libcurl could not be initialised")
        }
        self.multi = multi
        _ = mrpc_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.cachedConnections)
        // Several webhooks to one HTTP/2 receiver share its connection instead of opening more.
        _ = mrpc_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        do {
            settings = try CurlTransfer.Settings(configuration: configuration)
        } catch {
            curl_multi_cleanup(multi)
            throw error
        }
    }

    deinit {
        curl_multi_cleanup(multi)
        settings.release()
    }

    /// Puts a submission in the inbox and wakes the thread (any thread).
    /// - Returns: the submission's number, or nil once stopping.
    func accept(
        _ request: WebhookRequest, key: String, completion: @escaping @Sendable (WebhookCompletion) -> Void
    ) -> UInt64? {
        let number: UInt64? = inbox.withLock { inbox in
            guard !inbox.stopping else { return nil }
            let number = inbox.nextSubmission
            inbox.nextSubmission += 1
            inbox.submissions.append(Submission(number: number, key: key, request: request, completion: completion))
            return number
        }
        if number != nil { _ = curl_multi_wakeup(multi) }
        return number
    }

    /// Tells the thread to cancel everything and end (any thread).
    func stop() {
        inbox.withLock { $0.stopping = true }
        _ = curl_multi_wakeup(multi)
    }

    /// The thread's body: until stopped, start what was submitted, let curl move every transfer,
    /// report what ended, and sleep in `curl_multi_poll` until a socket is ready or a wake-up.
    func run() {
        while true {
            let (submissions, stopping) = inbox.withLock { inbox in
                defer { inbox.submissions.removeAll() }
                return (inbox.submissions, inbox.stopping)
            }
            if stopping {
                for submission in submissions { waiting[submission.key, default: []].append(submission) }
                cancelEverything()
                return
            }
            for submission in submissions { enqueue(submission) }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            reportCompletions()
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    private func enqueue(_ submission: Submission) {
        if busyKeys.contains(submission.key) {
            waiting[submission.key, default: []].append(submission)
        } else {
            start(submission)
        }
    }

    private func start(_ submission: Submission) {
        busyKeys.insert(submission.key)
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(submission: submission, settings: settings)
        } catch {
            finish(submission, result: .failure(error), elapsed: .zero)
            return
        }
        guard curl_multi_add_handle(multi, transfer.easy) == CURLM_OK else {
            finish(
                submission,
                result: .failure(WebhookDeliveryError(code: .other, message: "curl_multi_add_handle failed")),
                elapsed: .zero)
            return
        }
        inFlight[transfer.easy] = transfer
    }

    private func reportCompletions() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = inFlight.removeValue(forKey: easy)
            else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi, easy)
            let result = transfer.result(code: code)
            finish(transfer.submission, result: result, elapsed: transfer.elapsed)
        }
    }

    /// Reports `submission`'s end, then starts the next submission of its key.
    private func finish(
        _ submission: Submission, result: Result<WebhookResponse, WebhookDeliveryError>, elapsed: Duration
    ) {
        busyKeys.remove(submission.key)
        submission.completion(
            WebhookCompletion(submission: submission.number, key: submission.key, result: result, elapsed: elapsed))
        if var queue = waiting.removeValue(forKey: submission.key), !queue.isEmpty {
            let next = queue.removeFirst()
            if !queue.isEmpty { waiting[submission.key] = queue }
            start(next)
        }
    }

    private func cancelEverything() {
        let cancelled = WebhookDeliveryError(code: .cancelled, message: "the webhook client shut down")
        for (easy, transfer) in inFlight {
            curl_multi_remove_handle(multi, easy)
            transfer.submission.completion(
                WebhookCompletion(
                    submission: transfer.submission.number, key: transfer.submission.key, result: .failure(cancelled),
                    elapsed: transfer.elapsed))
        }
        inFlight.removeAll()
        for submission in waiting.values.joined() {
            submission.completion(
                WebhookCompletion(
                    submission: submission.number, key: submission.key, result: .failure(cancelled), elapsed: .zero))
        }
        waiting.removeAll()
        busyKeys.removeAll()
    }
}
