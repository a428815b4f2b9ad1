public import Moderation
internal import Synchronization
internal import ThreadSupport
public import WebhookDelivery

/// Delivers every enabled webhook of the store's apps (and reports the disabled ones): one thread that reads each webhook's
/// stretch of the action log after its cursor, posts it through the `WebhookClient`, and moves
/// the cursor in the store after a 2xx.
///
/// The log is the outbox: nothing is queued but the batch in flight, so the store's cursor is
/// the whole state, and another server (sharing a PostgreSQL store) takes over from it when
/// the lease holder stops renewing. Nothing here runs on an event loop or the store's writer:
/// the thread reads snapshots of its own, and its writes (leases, cursors) are queued to the
/// writer like any call's.
public final class WebhookDispatcher: WebhookPinger, Sendable {
    public struct Configuration: Sendable {
        /// This server's name in leases; unique per process.
        public var owner: String
        /// How long a lease lasts unless renewed.
        public var leaseMs: Int64 = 6_000
        /// How often leases are claimed and renewed. Another server takes over a dead holder's
        /// webhook within `leaseMs + claimIntervalMs`.
        public var claimIntervalMs: Int64 = 2_000
        /// How often the webhooks and their progress are read again (changes made through other
        /// servers, actions they committed).
        public var refreshIntervalMs: Int64 = 1_000
        /// The most actions read from the log per turn of a webhook whose groups filter may keep
        /// few of them (without one, a turn reads what one request carries).
        public var readLimit = 1_000
        public var retrySchedule = RetrySchedule()

        public init(owner: String) { self.owner = owner }
    }

    /// What other threads hand the dispatcher thread.
    enum Event {
        case sent(id: String, attempt: UInt64, WebhookCompletion)
        case recorded(id: String, attempt: UInt64, Result<Bool, ModerationError>)
        case claimed(Result<Set<String>, ModerationError>, claimedAt: Int64)
    }

    struct Inbox {
        var events: [Event] = []
        /// The actions committed since the thread last looked, per followed app, in seq order.
        var committed: [String: [ActionRecord]] = [:]
        var refreshNow = false
        var stopping = false

        var isEmpty: Bool { events.isEmpty && committed.isEmpty && !refreshNow && !stopping }
    }

    private let service: ModerationService
    private let client: WebhookClient
    private let configuration: Configuration
    private let inbox = ConditionLock(Inbox())
    private let published = Mutex<[WebhookDeliveryStatistics]>([])
    /// The apps with an enabled webhook: what the commit listener wakes the thread for.
    private let followed = Mutex<Set<String>>([])
    private let thread = Mutex<WorkerThread?>(nil)

    public init(service: ModerationService, client: WebhookClient, configuration: Configuration) {
        self.service = service
        self.client = client
        self.configuration = configuration
    }

    /// Follows the service's commits and starts the thread.
    public func start() {
        // Weakly: the service keeps its listeners for good, the dispatcher may go first.
        service.addCommitListener(
            following: { [weak self] app in self?.followed.withLock { $0.contains(app) } ?? false },
            listing: { [weak self] in self?.followed.withLock { $0 } ?? [] }
        ) { [weak self] actions in
            guard let self else { return }
            let apps = followed.withLock { $0 }
            let kept = actions.filter { apps.contains($0.app) }
            guard !kept.isEmpty else { return }
            inbox.withLock { inbox in
                for action in kept { inbox.committed[action.app, default: []].append(action) }
            }
            inbox.signal()
        }
        service.addWebhookChangeListener { [weak self] in self?.webhooksChanged() }
        thread.withLock { thread in
            guard thread == nil else { return }
            thread = WorkerThread(name: "mod-webhook-dispatch") { [self] in run() }
        }
    }

    /// Stops the thread and gives up this server's leases, so that another server takes over at
    /// once. Requests in flight are left to the client's shutdown. Idempotent.
    public func stop() {
        inbox.withLock { $0.stopping = true }
        inbox.signal()
        let running = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        guard let running else { return }
        running.join()
        let released = BlockingSemaphore()
        service.releaseWebhookLeases(owner: configuration.owner) { _ in released.signal() }
        _ = released.wait(milliseconds: 2_000)
    }

    /// Asks the thread to read the webhooks again now (one was changed through this server).
    func webhooksChanged() {
        inbox.withLock { $0.refreshNow = true }
        inbox.signal()
    }

    /// The webhooks this server knows, with their counters.
    public var statistics: [WebhookDeliveryStatistics] { published.withLock { $0 } }

    // MARK: TestWebhook

    public func ping(_ webhook: StoredWebhook, completion: @escaping @Sendable (WebhookPingResult) -> Void) {
        let secret: WebhookSecret
        do {
            secret = try WebhookSecret(parsing: webhook.secret)
        } catch {
            return completion(
                WebhookPingResult(httpStatus: 0, latencyMs: 0, error: "the webhook's secret does not read"))
        }
        let now = service.now
        let body = WebhookPayload.ping(webhookID: webhook.webhook.id, app: webhook.app, atMilliseconds: now)
        let request = WebhookRequest(
            url: webhook.webhook.url, messageID: "\(webhook.webhook.id)_ping_\(now)", timestamp: now / 1000,
            body: body, secret: secret)
        // Its own key: a ping does not wait behind the webhook's deliveries.
        client.submit(request, key: "\(webhook.webhook.id)/ping") { done in
            let latency = Self.milliseconds(done.elapsed)
            switch done.result {
            case .success(let response):
                completion(
                    WebhookPingResult(
                        httpStatus: response.status, latencyMs: latency, httpVersion: response.httpVersion))
            case .failure(let error):
                completion(WebhookPingResult(httpStatus: 0, latencyMs: latency, error: error.description))
            }
        }
    }

    // MARK: The thread

    private func run() {
        var state = DispatchState()
        while true {
            let wait = state.nextDeadline.map { max(0, $0 - service.now) }
            let taken = inbox.withLock(
                when: { !$0.isEmpty }, timeout: .milliseconds(wait ?? 60_000)
            ) { inbox -> Inbox in
                defer { inbox = Inbox() }
                return inbox
            }
            let received = taken ?? Inbox()
            if received.stopping { return }
            for event in received.events { handle(event, &state) }
            for (app, actions) in received.committed { state.noteCommitted(actions, of: app) }
            let now = service.now
            if received.refreshNow || now >= state.nextRefresh { refresh(&state, now: now) }
            if now >= state.nextClaim { claim(&state, now: now) }
            for id in state.runners.keys.sorted() { step(id, &state, now: service.now) }
            publish(state)
        }
    }

    private func refresh(_ state: inout DispatchState, now: Int64) {
        state.nextRefresh = now + configuration.refreshIntervalMs
        let webhooks: [StoredWebhook]
        do {
            webhooks = try service.allWebhooks()
        } catch {
            return // the store is away: try again at the next refresh
        }
        // A webhook new to this server, or enabled again, is claimed at once, not at the next round.
        if state.reconcile(webhooks) { state.nextClaim = 0 }
        let apps = Set(webhooks.filter(\.webhook.enabled).map(\.app))
        followed.withLock { $0 = apps }
        state.recent = state.recent.filter { apps.contains($0.key) }
    }

    private func claim(_ state: inout DispatchState, now: Int64) {
        state.nextClaim = now + configuration.claimIntervalMs
        guard !state.claiming else { return }
        let ids = state.runners.values.filter(\.stored.webhook.enabled).map(\.id)
        guard !ids.isEmpty else { return }
        state.claiming = true
        service.claimWebhookLeases(ids, owner: configuration.owner, durationMs: configuration.leaseMs) {
            [inbox] result in
            inbox.withLock { $0.events.append(.claimed(result, claimedAt: now)) }
            inbox.signal()
        }
    }

    private func handle(_ event: Event, _ state: inout DispatchState) {
        switch event {
        case .claimed(let result, let claimedAt):
            state.claiming = false
            guard case .success(let held) = result else { return }
            var gained = false
            for id in state.runners.keys {
                let holds = held.contains(id)
                gained = gained || (holds && state.runners[id]?.leased == false)
                state.runners[id]?.leased = holds
            }
            state.leaseValidUntil = claimedAt + configuration.leaseMs - configuration.claimIntervalMs / 2
            // A lease just taken: read the cursor the last holder left before delivering.
            if gained { state.nextRefresh = 0 }
        case .sent(let id, let attempt, let completion):
            sent(id, attempt, completion, &state)
        case .recorded(let id, let attempt, let result):
            recorded(id, attempt, result, &state)
        }
    }

    /// One turn of one webhook: start the next request if nothing is in flight and one is due.
    private func step(_ id: String, _ state: inout DispatchState, now: Int64) {
        guard var runner = state.runners[id], runner.phase == .idle else { return }
        if runner.removed {
            state.runners[id] = nil
            return
        }
        defer { state.runners[id] = runner }
        guard runner.leased, now < state.leaseValidUntil, runner.stored.webhook.enabled else { return }
        if runner.status.nextAttemptAt > now { return }
        if runner.pending == nil {
            guard runner.mayHaveWork else { return }
            read(&runner, &state, now: now)
            if runner.phase != .idle { return } // the read moved the cursor or disabled the webhook
        }
        guard let pending = runner.pending else { return }
        let secret: WebhookSecret
        do {
            secret = try WebhookSecret(parsing: runner.stored.secret)
        } catch {
            record(&runner, &state, status: runner.status, enabled: false, reason: "its secret does not read")
            return
        }
        state.attempts += 1
        let attempt = state.attempts
        runner.phase = .sending(attempt: attempt, generation: runner.stored.generation)
        let request = WebhookRequest(
            url: runner.stored.webhook.url, messageID: pending.batch.messageID, timestamp: now / 1000,
            body: pending.batch.body, secret: secret)
        client.submit(request, key: id) { [inbox] completion in
            inbox.withLock { $0.events.append(.sent(id: id, attempt: attempt, completion)) }
            inbox.signal()
        }
    }

    /// Reads the stretch of the log after the runner's cursor and makes its next batch; a
    /// stretch the filters keep nothing of moves the cursor past it without a request.
    private func read(_ runner: inout WebhookRunner, _ state: inout DispatchState, now: Int64) {
        let cursor = runner.status.lastDeliveredSeq
        let webhook = runner.stored.webhook
        // What one request can carry, unless the groups filter (applied here, not in the store)
        // may leave most of a stretch out: then a longer stretch per read.
        let limit = webhook.guids.isEmpty ? WebhookPayload.maximumActions : configuration.readLimit
        let stretch: (rows: [ActionRecord], head: UInt64, oldest: UInt64)
        if let recent = state.recentActions(of: runner.stored.app, after: cursor, limit: limit, kinds: webhook.kinds) {
            // Caught up: the actions are those the commit listener handed over, no read needed.
            stretch = (recent.rows, recent.head, 0)
        } else {
            do {
                stretch = try service.withActionLog(app: runner.stored.app) { log throws(ModerationError) in
                    (
                        try log.actions(afterSeq: cursor, limit: limit, kinds: Set(webhook.kinds)),
                        try log.headSeq(), try log.oldestRetainedSeq()
                    )
                }
            } catch {
                return // the store is away: the next refresh sets mayHaveWork again
            }
        }
        state.noteHead(stretch.head, of: runner.stored.app)
        if cursor + 1 < stretch.oldest {
            record(
                &runner, &state, status: runner.status, enabled: false,
                reason:
                    "its cursor (seq \(cursor)) fell out of the log's retention (the oldest action kept is seq \(stretch.oldest)); replay it from a kept seq and enable it"
            )
            return
        }
        let scannedThrough = stretch.rows.count == limit ? stretch.rows.last?.seq ?? cursor : stretch.head
        runner.mayHaveWork = stretch.rows.count == limit
        let kept = stretch.rows.filter { webhook.delivers(kind: $0.kind, guid: $0.isAppWide ? "" : $0.group.guid) }
        runner.statistics.oldestUndeliveredAt = kept.first?.timestamp ?? 0
        guard !kept.isEmpty else {
            if scannedThrough > cursor {
                var status = runner.status
                status.lastDeliveredSeq = scannedThrough
                record(&runner, &state, status: status, enabled: true, clearsPending: true)
            }
            return
        }
        let actions = kept.prefix(WebhookPayload.maximumActions).map {
            WebhookAction(seq: $0.seq, committedAtMilliseconds: $0.timestamp, json: ActionJSON.json(of: $0))
        }
        guard let batch = WebhookPayload.batch(webhookID: webhook.id, app: runner.stored.app, actions: actions) else {
            return
        }
        let advanceTo = batch.actionCount == kept.count ? scannedThrough : batch.lastSeq
        if advanceTo < scannedThrough { runner.mayHaveWork = true }
        runner.pending = WebhookRunner.PendingBatch(
            batch: batch, advanceTo: advanceTo)
    }

    private func sent(_ id: String, _ attempt: UInt64, _ completion: WebhookCompletion, _ state: inout DispatchState) {
        guard var runner = state.runners[id], case .sending(attempt, let generation) = runner.phase else { return }
        defer { state.runners[id] = runner }
        runner.phase = .idle
        guard generation == runner.stored.generation, !runner.removed, let pending = runner.pending else {
            runner.pending = nil // the app moved the cursor meanwhile: this outcome counts for nothing
            return
        }
        let now = service.now
        let failure: RetrySchedule.Failure
        switch completion.result {
        case .success(let response) where (200..<300).contains(response.status):
            runner.statistics.delivered += 1
            runner.statistics.actionsDelivered += UInt64(pending.batch.actionCount)
            record(
                &runner, &state, status: WebhookStatus(lastDeliveredSeq: pending.advanceTo), enabled: true,
                clearsPending: true)
            return
        case .success(let response):
            failure = .status(response.status, retryAfter: response.retryAfter)
        case .failure(let error):
            failure = .error(error.description)
        }
        runner.statistics.failed += 1
        var status = runner.status
        status.consecutiveFailures += 1
        if status.failingSince == 0 { status.failingSince = now }
        status.lastError = RetrySchedule.text(of: failure)
        switch configuration.retrySchedule.decide(
            after: failure, consecutiveFailures: status.consecutiveFailures,
            failingSinceMilliseconds: status.failingSince,
            nowMilliseconds: now, jitterDraw: Double.random(in: -1...1))
        {
        case .retry(let delay):
            status.nextAttemptAt = now + delay
            record(&runner, &state, status: status, enabled: true)
        case .disable(let reason):
            status.nextAttemptAt = 0
            record(&runner, &state, status: status, enabled: false, reason: reason)
        }
    }

    /// Writes the runner's new status (and `enabled`) to the store, fenced by its lease and
    /// generation; the runner waits for the write before its next request.
    private func record(
        _ runner: inout WebhookRunner, _ state: inout DispatchState, status: WebhookStatus, enabled: Bool,
        clearsPending: Bool = false, reason: String? = nil
    ) {
        var status = status
        if let reason { status.lastError = reason }
        state.attempts += 1
        let attempt = state.attempts
        let outcome = WebhookRunner.Outcome(status: status, enabled: enabled, clearsPending: clearsPending)
        runner.phase = .recording(attempt: attempt, outcome: outcome)
        let id = runner.id
        service.recordWebhookDelivery(
            id: id, owner: configuration.owner, generation: runner.stored.generation, status: status,
            enabled: enabled
        ) { [inbox] result in
            inbox.withLock { $0.events.append(.recorded(id: id, attempt: attempt, result)) }
            inbox.signal()
        }
    }

    private func recorded(
        _ id: String, _ attempt: UInt64, _ result: Result<Bool, ModerationError>, _ state: inout DispatchState
    ) {
        guard var runner = state.runners[id], case .recording(attempt, let outcome) = runner.phase else { return }
        defer { state.runners[id] = runner }
        runner.phase = .idle
        switch result {
        case .success(true):
            runner.status = outcome.status
            if outcome.clearsPending {
                runner.pending = nil
                runner.mayHaveWork = true
            }
            if !outcome.enabled {
                // Kept, disabled, for the metrics, until the app enables or deletes it.
                runner.stored.webhook.enabled = false
                runner.leased = false
            }
        case .success(false):
            // The lease passed to another server, or the app moved the cursor: read again.
            runner.leased = false
            runner.pending = nil
            state.nextRefresh = 0
            state.nextClaim = 0
        case .failure:
            // The store is away: keep the batch and try again shortly (a delivered batch is then
            // sent again, with the same webhook-id).
            var status = runner.status
            status.nextAttemptAt = service.now + 1_000
            runner.status = status
        }
    }

    private func publish(_ state: DispatchState) {
        let statistics = state.runners.values.sorted { $0.id < $1.id }.map { runner in
            var statistics = runner.statistics
            statistics.state = runner.webhook.state
            statistics.leased = runner.leased
            let head = state.heads[runner.stored.app] ?? 0
            statistics.lagSeqs = head > runner.status.lastDeliveredSeq ? head - runner.status.lastDeliveredSeq : 0
            if statistics.lagSeqs == 0 { statistics.oldestUndeliveredAt = 0 }
            return statistics
        }
        published.withLock { $0 = statistics }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// The dispatcher thread's own state.
struct DispatchState {
    var runners: [String: WebhookRunner] = [:]
    /// The last seq known per app (commits seen, logs read).
    var heads: [String: UInt64] = [:]
    var nextRefresh: Int64 = 0
    var nextClaim: Int64 = 0
    var claiming = false
    /// Until when (Unix ms) the leases of the last successful claim may be acted on.
    var leaseValidUntil: Int64 = 0
    /// Numbers requests and writes, so a late completion is matched to what it answers.
    var attempts: UInt64 = 0

    /// The app's last actions as the commit listener handed them over, gapless and in seq
    /// order, between `recentLimit` and twice that many: what a caught-up webhook delivers
    /// without reading the log.
    var recent: [String: [ActionRecord]] = [:]
    static let recentLimit = 4_096

    /// Keeps the actions committed to `app` (a batch that does not follow the ones kept starts
    /// afresh: the listener missed some, which the log has). In place, and trimmed only when
    /// twice the limit, so that a commit costs its own actions, not a copy of the rest.
    mutating func noteCommitted(_ actions: [ActionRecord], of app: String) {
        guard let first = actions.first?.seq, let last = actions.last?.seq else { return }
        if let previous = recent[app]?.last?.seq, first != previous + 1 { recent[app] = nil }
        recent[app, default: []].append(contentsOf: actions)
        if let count = recent[app]?.count, count > 2 * Self.recentLimit {
            recent[app]?.removeFirst(count - Self.recentLimit)
        }
        noteHead(last, of: app)
    }

    /// Up to `limit` actions of `app` after `cursor` (of `kinds`, when given) from the recent
    /// ones, and the last seq they cover; nil when they do not reach back to the cursor or on to
    /// the head this thread has seen in the log (which must be read then).
    func recentActions(of app: String, after cursor: UInt64, limit: Int, kinds: [ActionKind])
        -> (rows: [ActionRecord], head: UInt64)?
    {
        guard let kept = recent[app], let first = kept.first?.seq, let last = kept.last?.seq,
            first <= cursor + 1, last >= cursor
        else { return nil }
        var rows: [ActionRecord] = []
        var through = last
        for action in kept[Int(cursor + 1 - first)...] where kinds.isEmpty || kinds.contains(action.kind) {
            rows.append(action)
            if rows.count == limit {
                through = action.seq
                break
            }
        }
        // Short of the head the log showed: the listener has yet to hand over the rest, or missed
        // it; the log has it.
        if rows.count < limit && last < heads[app] ?? 0 { return nil }
        return (rows, through)
    }

    mutating func noteHead(_ head: UInt64, of app: String) {
        heads[app] = max(heads[app] ?? 0, head)
        for id in runners.keys
        where runners[id]?.stored.app == app && (runners[id]?.status.lastDeliveredSeq ?? 0) < head {
            runners[id]?.mayHaveWork = true
        }
    }

    /// Takes the store's list of webhooks: new ones start, deleted ones stop (once idle), disabled
    /// ones stay (not delivered) for the metrics. Returns whether a webhook is new here or enabled
    /// again, which is worth a claim now.
    mutating func reconcile(_ webhooks: [StoredWebhook]) -> Bool {
        let fresh = Dictionary(webhooks.map { ($0.webhook.id, $0) }) { first, _ in first }
        var unclaimed = false
        for (id, stored) in fresh {
            if stored.webhook.enabled && runners[id]?.stored.webhook.enabled != true { unclaimed = true }
            if runners[id] == nil {
                runners[id] = WebhookRunner(stored)
            } else {
                runners[id]?.update(from: stored)
                runners[id]?.removed = false
            }
            runners[id]?.mayHaveWork = true
        }
        for id in runners.keys where fresh[id] == nil { runners[id]?.removed = true }
        return unclaimed
    }

    /// The next time the thread must wake without news: a refresh, a claim, a retry.
    var nextDeadline: Int64? {
        var deadline = min(nextRefresh, nextClaim)
        for runner in runners.values where runner.phase == .idle && runner.status.nextAttemptAt > 0 {
            deadline = min(deadline, runner.status.nextAttemptAt)
        }
        return deadline
    }
}
