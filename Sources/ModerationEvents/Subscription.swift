import Moderation
import Synchronization

/// One live subscription: its filter, where it stands in the log, and its sink.
///
/// While its replay runs, live actions are buffered (bounded); afterwards they pass straight
/// through. Every state change happens under the subscription's own lock, so the dispatcher and
/// the replaying worker never interleave deliveries.
final class Subscription: Sendable {
    let id: UInt64
    let app: String
    let sink: any EventSink
    /// The request's after_seq; nil for a subscription that asked for live actions only.
    let afterSeq: UInt64?
    private let state: Mutex<State>

    /// Live actions a replaying subscription may buffer before it is cut off as too slow.
    static let replayBufferLimit = 100_000

    private struct State {
        var filter: SubscriptionFilter
        var replaying = true
        var buffer: [(ActionRecord, [UInt8])] = []
        var ended = false
        /// The seq of the last action sent, or the start point before the first.
        var lastSent: UInt64 = 0
        /// The seq through which the log has been through the filter (sent or not): the replay's
        /// end once live. The dispatcher may still hand over actions the replay already covered
        /// (committed, hence in the replay's snapshot, but not yet dispatched when the
        /// subscription went live); those are skipped, not sent twice or re-applied to the
        /// tracked membership.
        var through: UInt64 = 0
        /// Set once the subscription knows where it starts (`start(at:)`).
        var started = false
    }

    init(id: UInt64, app: String, filter: SubscriptionFilter, sink: any EventSink, afterSeq: UInt64? = nil) {
        self.id = id
        self.app = app
        self.afterSeq = afterSeq
        self.sink = sink
        state = Mutex(State(filter: filter))
    }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// What the subscription follows (its filter's target, with the user's groups as tracked now).
    var followed: SubscriptionFilter.Target { state.withLock { $0.filter.target } }

    /// For a user subscription, the groups its user belongs to as far as it has seen the log.
    var trackedGroups: Set<String> {
        if case .user(_, let memberOf) = followed { return memberOf }
        return []
    }

    var lastSent: UInt64 { state.withLock { $0.lastSent } }

    /// A live action from the dispatcher; false once the subscription has ended.
    func offer(_ action: ActionRecord, encoded: [UInt8]) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            if state.replaying {
                state.buffer.append((action, encoded))
                if state.buffer.count > Self.replayBufferLimit {
                    end(&state, .slowConsumer(lastSeq: state.lastSent))
                    return false
                }
                return true
            }
            return deliver(action, encoded, &state)
        }
    }

    /// Replays one action (on the replaying worker). When the connection is full it waits for it
    /// to drain — outside the lock, so the dispatcher's live offers never wait on a replay.
    func replay(_ action: ActionRecord, encoded: [UInt8]) -> Bool {
        let outcome: EventSendOutcome? = state.withLock { state in
            guard !state.ended else { return .closed }
            state.through = max(state.through, action.seq)
            guard state.filter.admit(action) else { return nil }
            let outcome = sink.send(encoded: encoded)
            if outcome != .overloaded { _ = settle(outcome, seq: action.seq, &state) }
            return outcome
        }
        guard let outcome else { return true }
        guard outcome == .overloaded else { return outcome == .sent }
        let drained = sink.waitForCapacity(milliseconds: 10_000)
        return state.withLock { state in
            guard !state.ended else { return false }
            return settle(drained ? sink.send(encoded: encoded) : .overloaded, seq: action.seq, &state)
        }
    }

    /// Sets where the subscription starts (the replay's end, or the head for a live one).
    func start(at seq: UInt64, filter: SubscriptionFilter? = nil) {
        state.withLock { state in
            state.lastSent = max(state.lastSent, seq)
            state.through = max(state.through, seq)
            state.started = true
            if let filter { state.filter = filter }
        }
    }

    /// The replay is done: sends the buffered actions after `head`, then goes live.
    func goLive(after head: UInt64) {
        state.withLock { state in
            guard !state.ended else { return }
            let buffered = state.buffer
            state.buffer = []
            state.replaying = false
            state.through = max(state.through, head)
            for (action, encoded) in buffered {
                guard deliver(action, encoded, &state) else { return }
            }
        }
    }

    /// Ends the subscription (at most once).
    func end(_ reason: SubscriptionEnd) {
        state.withLock { state in end(&state, reason) }
    }

    /// Ends because the server shuts down, telling the client where to resume. A subscription
    /// that has not yet found where it starts has been sent nothing: it resumes from
    /// `unstartedResume` (its after_seq, or the log's head for one that asked for live actions).
    func endForShutdown(unstartedResume: () -> UInt64) {
        let started = state.withLock { $0.started }
        let resume = started ? 0 : unstartedResume()
        state.withLock { state in
            end(&state, .shuttingDown(lastSeq: state.started ? state.lastSent : max(state.lastSent, resume)))
        }
    }

    /// The stream is gone (cancel, connection closed): stop without sending anything.
    func abandon() {
        state.withLock { state in
            state.ended = true
            state.buffer = []
        }
    }

    private func deliver(_ action: ActionRecord, _ encoded: [UInt8], _ state: inout State) -> Bool {
        guard action.seq > state.through else { return true }
        state.through = action.seq
        guard state.filter.admit(action) else { return true }
        return settle(sink.send(encoded: encoded), seq: action.seq, &state)
    }

    private func settle(_ outcome: EventSendOutcome, seq: UInt64, _ state: inout State) -> Bool {
        switch outcome {
        case .sent:
            state.lastSent = seq
            return true
        case .overloaded:
            end(&state, .slowConsumer(lastSeq: state.lastSent))
            return false
        case .closed:
            state.ended = true
            state.buffer = []
            return false
        }
    }

    private func end(_ state: inout State, _ reason: SubscriptionEnd) {
        guard !state.ended else { return }
        state.ended = true
        state.buffer = []
        sink.end(reason)
    }
}
