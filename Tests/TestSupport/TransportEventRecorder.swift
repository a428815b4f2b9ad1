public import RPCCore
import Synchronization

/// A `CallObserver` that keeps the transport events and rate-limit refusals it is told of, in
/// order, for tests that check what a session reports to the metrics.
public final class TransportEventRecorder: CallObserver {
    private let recorded = Mutex<(events: [TransportEvent], rateLimited: [String])>(([], []))

    public init() {}

    public func connectionOpened() {}
    public func connectionClosed() {}
    public func transferred(received: Int, sent: Int) {}
    public func streamMessage(encodedBytes: Int, wireBytes: Int, methodIndex: Int?, wire: WireKind) {}
    public func callEnded(_ call: CallRecord) {}

    public func transportEvent(_ event: TransportEvent) { recorded.withLock { $0.events.append(event) } }

    public func callRateLimited(app: String) { recorded.withLock { $0.rateLimited.append(app) } }

    /// The transport events so far.
    public var events: [TransportEvent] { recorded.withLock { $0.events } }

    /// The apps of the calls refused for their rate so far.
    public var rateLimitedApps: [String] { recorded.withLock { $0.rateLimited } }
}
