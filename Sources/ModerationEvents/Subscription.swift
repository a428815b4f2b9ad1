import Moderation
import Synchronization
import ThreadSupport

/// One live subscription: its filter, where it stands in the log, and its sink.
///
/// While its replay runs, live actions are buffered (bounded); afterwards they pass straight
/// through. Every state change happens under the subscription's own lock, so the dispatcher and
/// the replaying worker never interleave deliveries.
///
/// A subscription the hub admitted holds a place under its app's cap and bytes of the memory
/// budget (`admission`): an estimate of its record and filter, plus what it buffers while
/// replaying. Invariant: all of it is given back exactly once, when the subscription ends —
/// `close(_:)` is the only place `ended` is set — or, should it never end, when it is freed.
final class Subscription: Sendable {
    let id: UInt64
    let app: String
    let sink: any EventSink
    /// The request's after_seq; nil for a subscription that asked for live actions only.
    let afterSeq: UInt64?
    /// The acting user who opened it (validated); nil for the app's. A ban of theirs from the
    /// app, committed after the subscription started, ends it (`deliver`).
    let actor: String?
    /// Its place under the hub's limits; nil for a subscription made outside the hub.
    private let admission: SubscriptionQuota.Admission?
    private var quota: SubscriptionQuota? { admission?.quota }
    private let state: Mutex<State>

    /// Live actions a replaying subscription may buffer before it is cut off as too slow.
    static let replayBufferLimit = 100_000

    /// Bytes charged for a subscription's record: the subscription and its lock, its registry
    /// entry and index slots, its queued commands, and its stream's call and sink.
    static let recordBytes = 1_024

    /// Bytes charged for a filter's groups and user beyond the record.
    static func filterBytes(_ target: SubscriptionFilter.Target) -> Int {
        switch target {
        case .app: 0
        case .groups(let guids): guids.reduce(0) { $0 + 64 + $1.utf8.count }
        case .user(let uid, let memberOf): memberOf.reduce(64 + uid.utf8.count) { $0 + 64 + $1.utf8.count }
        }
    }

    /// Bytes charged for one buffered action: its slot, and the action and its encoding, which
    /// the buffer keeps alive (shared with other subscribers, but counted for each, as any of
    /// them may be the last to let go).
    static func bufferedBytes(_ encoded: [UInt8]) -> Int {
        MemoryLayout<(ActionRecord, [UInt8])>.stride + 2 * encoded.count
    }

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
        /// Bytes of the budget held now (0 once ended), of which `bufferedBytes` for the buffer.
        var reserved: Int
        var bufferedBytes = 0
    }

    /// - Parameters:
    ///   - admission: its place under the hub's limits, with the bytes reserved so far; nil
    ///     for a subscription that counts against nothing.
    init(
        id: UInt64, app: String, filter: SubscriptionFilter, sink: any EventSink, afterSeq: UInt64? = nil,
        actor: String? = nil, admission: SubscriptionQuota.Admission? = nil
    ) {
        self.id = id
        self.app = app
        self.afterSeq = afterSeq
        self.actor = actor
        self.sink = sink
        self.admission = admission
        state = Mutex(State(filter: filter, reserved: admission?.reserved ?? 0))
    }

    deinit {
        state.withLock { _ = close(&$0) }
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

    /// Asks for this subscription's fields and lock to be brought into cache (`offer` comes soon).
    func prefetch() {
        MemoryHint.prefetch(self, lines: 4)
    }

    /// Asks for what its sink's `send` touches (`EventSink.prefetch(depth:)`); call it once
    /// `prefetch` has had time to bring this subscription in, since the sink is read from it.
    func prefetchSink(depth: Int) {
        sink.prefetch(depth: depth)
    }

    /// A live action from the dispatcher; false once the subscription has ended.
    func offer(_ action: ActionRecord, encoded: [UInt8]) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            if state.replaying {
                let cost = Self.bufferedBytes(encoded)
                guard state.buffer.count < Self.replayBufferLimit, quota?.hold(cost) ?? true else {
                    // Too far behind, or the server's memory budget has no room for more.
                    end(&state, .slowConsumer(lastSeq: state.lastSent))
                    return false
                }
                if quota != nil {
                    state.reserved += cost
                    state.bufferedBytes += cost
                }
                state.buffer.append((action, encoded))
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

    /// Sets where the subscription starts (after `seq`: the replay's start, or the head for a
    /// live one) and tells its sink, whose stream's first message says so (`head` is the log's
    /// head the start was read at). A new filter's groups (a user's memberships, known from the
    /// log only now) are charged on top of what the subscription was admitted with.
    func start(at seq: UInt64, head: UInt64, filter: SubscriptionFilter? = nil) {
        state.withLock { state in
            state.lastSent = max(state.lastSent, seq)
            state.through = max(state.through, seq)
            state.started = true
            if let filter {
                let growth = Self.filterBytes(filter.target) - Self.filterBytes(state.filter.target)
                state.filter = filter
                if let quota, growth > 0, !state.ended {
                    quota.holdAnyway(growth)
                    state.reserved += growth
                }
            }
            guard !state.ended else { return }
            // Nothing was sent before (the dispatcher buffers until `goLive`, the replay starts
            // after this), so this is the stream's first message.
            switch sink.started(afterSeq: seq, headSeq: head) {
            case .sent: break
            case .overloaded: end(&state, .slowConsumer(lastSeq: state.lastSent))
            case .closed: close(&state)
            }
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
            if let quota, state.bufferedBytes > 0 {
                quota.letGo(state.bufferedBytes)
                state.reserved -= state.bufferedBytes
                state.bufferedBytes = 0
            }
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
        state.withLock { _ = close(&$0) }
    }

    /// Hands a live action to the sink when the filter admits it. A ban from the app of the
    /// subscription's acting user (not a shadow ban) ends it after that, with
    /// `ERR_USER_BANNED_FROM_APP`: every such action here is newer than where the subscription
    /// started, whose start refused a user banned then. A replay never ends it (`replay`): the
    /// bans it goes through were lifted before the start.
    private func deliver(_ action: ActionRecord, _ encoded: [UInt8], _ state: inout State) -> Bool {
        guard action.seq > state.through else { return true }
        state.through = action.seq
        if state.filter.admit(action) {
            guard settle(sink.send(encoded: encoded), seq: action.seq, &state) else { return false }
        }
        guard action.kind == .appBanned, !action.shadow, let actor, action.actionOn?.uid == actor else { return true }
        let error = ModerationError(.userBannedFromApp, "user \(actor) was banned from the app; the subscription ended")
        end(&state, .revoked(error, lastSeq: state.lastSent))
        return false
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
            close(&state)
            return false
        }
    }

    private func end(_ state: inout State, _ reason: SubscriptionEnd) {
        if close(&state) { sink.end(reason) }
    }

    /// Marks the subscription ended, drops its buffer and gives back everything it held of the
    /// quota; false when it had already ended.
    @discardableResult
    private func close(_ state: inout State) -> Bool {
        guard !state.ended else { return false }
        state.ended = true
        state.buffer = []
        if let admission { admission.quota.release(admission, bytes: state.reserved) }
        state.reserved = 0
        state.bufferedBytes = 0
        return true
    }
}
