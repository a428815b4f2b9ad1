internal import Synchronization
internal import ThreadSupport

/// Sends webhook requests on one thread running a libcurl multi handle.
///
/// `submit` can be called from any thread and returns at once: the request goes into a locked
/// inbox and `curl_multi_wakeup` interrupts the thread's poll. All transfers share the multi
/// handle, whose connection cache keeps connections alive per endpoint (HTTP/2 where the receiver
/// offers it). Requests submitted under the same key (a webhook's id) are sent one after another
/// in submission order, so their completions come in that order; different keys run concurrently.
/// Each completion is reported once, on the delivery thread: the callback must not block, nor
/// release the client's last reference (its `deinit` joins the thread it would be running on).
public final class WebhookClient: Sendable {
    private let loop: DeliveryLoop
    private let thread: Mutex<WorkerThread?>

    /// Starts the delivery thread.
    /// - Throws: `WebhookDeliveryError` when curl cannot be set up or the extra CA file cannot be read.
    public init(configuration: WebhookClientConfiguration = WebhookClientConfiguration()) throws(WebhookDeliveryError) {
        let loop = try DeliveryLoop(configuration: configuration)
        self.loop = loop
        thread = Mutex(WorkerThread(name: "mod-webhooks") { loop.run() })
    }

    deinit { shutdown() }

    /// Queues `request` behind any earlier one of `key`.
    /// - Returns: the submission's number, which its completion carries (0 after `shutdown`,
    ///   when the completion has already been called with `.cancelled`).
    @discardableResult
    public func submit(
        _ request: WebhookRequest, key: String, completion: @escaping @Sendable (WebhookCompletion) -> Void
    ) -> UInt64 {
        guard let number = loop.accept(request, key: key, completion: completion) else {
            completion(
                WebhookCompletion(
                    submission: 0, key: key,
                    result: .failure(
                        WebhookDeliveryError(code: .cancelled, message: "the webhook client is shut down")),
                    elapsed: .zero))
            return 0
        }
        return number
    }

    /// Stops the thread: requests still queued or in flight complete as `.cancelled`. Idempotent.
    public func shutdown() {
        loop.stop()
        let thread = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        thread?.join()
    }
}
