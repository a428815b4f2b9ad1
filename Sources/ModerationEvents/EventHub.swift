internal import Glibc
public import Moderation
public import RPCCore
import Synchronization
import ThreadSupport

/// Fans the action log out to live subscriptions without ever blocking the writer.
///
/// The store's writer hands each committed batch to `publish`, which only queues it. One
/// dispatcher thread takes batches in order, encodes each action once, finds the subscriptions
/// it may concern through indexes (by group, by user, and — for user subscriptions — by the
/// groups their user belongs to), and offers it to each; a subscription filters and hands the
/// bytes to its sink, which compresses per stream and queues for its connection's loop. A sink
/// whose connection does not keep up is ended with its last seq instead of queueing more.
///
/// The indexes (`Registry`) belong to the dispatcher thread alone. Event loops (a stream that
/// ends) and replay threads (a subscription that starts or goes live) only queue a command in
/// the dispatcher's inbox, which the dispatcher applies between batches: no lock is ever held
/// for work that grows with the number of subscriptions, and one tenant's thousands of
/// subscriptions closing at once cost every other connection nothing.
///
/// `subscribe` replays from the log first when asked to (`afterSeq`), buffering live actions
/// meanwhile, then goes live: no gap and no duplicate across the switch.
///
/// Each app may have at most `maxSubscriptionsPerApp` subscriptions open
/// (`ERR_TOO_MANY_SUBSCRIPTIONS` past it), and each subscription reserves an estimate of what it
/// holds in the memory budget (kind `.subscriptions`) until it ends.
public final class EventHub: Sendable {
    let service: ModerationService
    let encode: @Sendable (ActionRecord) -> [UInt8]
    private let inbox = DispatcherInbox()
    private let quota: SubscriptionQuota
    private let nextID = Atomic<UInt64>(1)
    private let dispatcher = Mutex<WorkerThread?>(nil)
    private let replays: ReplayThreads
    /// The seq of the last action the dispatcher handed to subscribers, by app.
    private let dispatched = Mutex<[String: UInt64]>([:])

    /// Actions read per page while replaying.
    static let replayPageSize = 500

    /// Subscriptions an app may have open at once unless told otherwise: the fan-out benchmark
    /// runs 10 000 of one app, and each costs about 1 KiB before any event.
    public static let defaultMaxSubscriptionsPerApp = 100_000

    /// - Parameters:
    ///   - encode: the wire encoding of one event (the RPC adapter's message), made once per
    ///     action and shared by every subscriber.
    ///   - replayThreads: threads that start subscriptions for `startSubscription`; as many
    ///     subscribers whose connections stall during their replay make later subscriptions wait
    ///     (up to the replay's drain timeout), nothing else.
    ///   - maxSubscriptionsPerApp: subscriptions one app may have open at once.
    ///   - memoryBudget: what the server's clients may make it hold; subscriptions reserve their
    ///     share (kind `.subscriptions`), and `startSubscription` refuses one it has no room for.
    public init(
        service: ModerationService, encode: @escaping @Sendable (ActionRecord) -> [UInt8], replayThreads: Int = 8,
        maxSubscriptionsPerApp: Int = EventHub.defaultMaxSubscriptionsPerApp,
        memoryBudget: MemoryBudget = .unlimited()
    ) {
        self.service = service
        self.encode = encode
        quota = SubscriptionQuota(maxPerApp: maxSubscriptionsPerApp, budget: memoryBudget)
        replays = ReplayThreads(count: replayThreads)
        let inbox = self.inbox
        // Only apps with a subscription here: another instance's actions of the others are not
        // even read (see `SubscriptionQuota.follows` for why a starting subscription misses none).
        let quota = quota
        service.addCommitListener(following: { app in quota.follows(app: app) }, listing: { quota.followedApps() }) {
            batch in inbox.push(batch)
        }
        let thread = WorkerThread(name: "mod-events") { [self] in
            // Made here, used here only: the registry is confined to this thread.
            let registry = Registry()
            while let work = inbox.next() {
                var barriers: [BlockingSemaphore] = []
                for command in work.commands {
                    // A barrier waits for the batches taken with it too, which were queued
                    // before it (or just after: no harm).
                    if case .barrier(let done) = command { barriers.append(done) } else { apply(command, to: registry) }
                }
                dispatch(work.batch, registry)
                for done in barriers { done.signal() }
            }
            // Closed: what subscribed after the last `endAll` ends too.
            endAll(registry)
        }
        dispatcher.withLock { $0 = thread }
    }

    /// Subscriptions open now (replaying or live), of every app.
    public var subscriptionCount: Int { quota.openCount }

    /// Subscriptions of `app` open now.
    public func subscriptionCount(app: String) -> Int { quota.openCount(app: app) }

    /// Subscriptions one app may have open at once.
    public var maxSubscriptionsPerApp: Int { quota.maxPerApp }

    /// The seq of the last action of `app` handed to its subscribers, for the apps with a
    /// subscription open now: against the app's head seq, how far the fan-out lags behind the
    /// log. (Only those apps: the others' actions are not even read, so theirs would only age.)
    public func dispatchedSeqs() -> [(app: String, seq: UInt64)] {
        let seqs = dispatched.withLock { $0 }
        return seqs.filter { quota.openCount(app: $0.key) > 0 }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Queues a committed batch for delivery (normally called by the service's commit listener).
    public func publish(_ batch: [ActionRecord]) { inbox.push(batch) }

    /// Returns once the dispatcher has applied every subscription change queued before the call
    /// (starts, ends) and delivered every batch published before it: for tests and benchmarks
    /// that measure or check the registry. Returns at once after `shutdown`.
    public func settle() {
        let done = BlockingSemaphore()
        if inbox.send(.barrier(done)) { done.wait() }
    }

    /// Starts a subscription on one of the hub's replay threads (see `subscribe`); returns at once.
    /// `refused` gets why when the subscription is malformed or not allowed, is over its app's
    /// cap, has no room in the memory budget, or its cursor has expired (nothing was sent then).
    /// Malformed, over the cap and out of room are decided before this returns, on the caller's
    /// thread; what the caller may follow is decided in the snapshot it starts from, after the
    /// acting user's ban from the app.
    public func startSubscription(
        _ request: SubscriptionRequest, sink: any EventSink, refused: @escaping @Sendable (SubscriptionRefusal) -> Void
    ) {
        let target: ResolvedTarget
        let actor: String?
        let admission: SubscriptionQuota.Admission
        do throws(SubscriptionRefusal) {
            do throws(ModerationError) {
                target = try resolveTarget(request)
                actor = try actingUser(request)
            } catch {
                throw .rejected(error)
            }
            admission = try admit(request.caller.app, target: target, force: false)
        } catch {
            refused(error)
            return
        }
        replays.submit { [self] in
            do throws(ModerationError) {
                try run(request, target: target, actor: actor, admission: admission, sink: sink)
            } catch {
                refused(.rejected(error))
            }
        }
    }

    /// Starts a subscription: checks what the caller may follow, replays from the log when
    /// `afterSeq` is set, then goes live. Blocks while replaying, up to 10 s at a time while the
    /// subscriber's connection is full (`startSubscription` runs it on the hub's own threads).
    /// The subscription counts against the memory budget, but is not refused for it.
    /// - Throws: `ModerationError` when the request is not allowed, over its app's cap, or the
    ///   cursor has expired; nothing was sent then.
    public func subscribe(_ request: SubscriptionRequest, sink: any EventSink) throws(ModerationError) {
        let target = try resolveTarget(request)
        let actor = try actingUser(request)
        let admission: SubscriptionQuota.Admission
        do throws(SubscriptionRefusal) {
            admission = try admit(request.caller.app, target: target, force: true)
        } catch {
            guard case .rejected(let error) = error else { preconditionFailure("a forced admission has room") }
            throw error
        }
        try run(request, target: target, actor: actor, admission: admission, sink: sink)
    }

    /// Ends every subscription with UNAVAILABLE and where to resume, and stops the dispatcher.
    public func shutdown() {
        inbox.send(.endAll)
        replays.shutdown()
        inbox.close()
        dispatcher.withLock { $0 }?.join()
    }

    /// Takes a place under `app`'s cap and the subscription's first reservation of the budget
    /// (its record and the filter known so far).
    private func admit(_ app: String, target: ResolvedTarget, force: Bool) throws(SubscriptionRefusal)
        -> SubscriptionQuota.Admission
    {
        let bytes = Subscription.recordBytes + Subscription.filterBytes(target.filterTarget)
        do throws(SubscriptionQuota.Refusal) {
            return try quota.admit(app: app, bytes: bytes, force: force)
        } catch {
            switch error {
            case .tooMany:
                let cap = quota.maxPerApp
                throw .rejected(
                    ModerationError(
                        .tooManySubscriptions,
                        "app \(app) already has \(cap) open subscription\(cap == 1 ? "" : "s"), the most the server "
                            + "allows an app; end one before starting another",
                        details: ["max_subscriptions_per_app": String(cap)]))
            case .overBudget:
                throw .overloaded(
                    "the server's memory budget has no room for another subscription (app \(app)); retry later")
            }
        }
    }

    /// Registers, authorizes, replays and hands the subscription over to the dispatcher.
    ///
    /// An acting user banned from the app is refused (`ERR_USER_BANNED_FROM_APP`) in the same
    /// snapshot the start reads, before what they ask to follow is authorized; a ban committed
    /// after that snapshot comes later in the log, and ends the subscription when it is delivered
    /// (`Subscription.deliver`), so no subscription outlives a ban of its user.
    private func run(
        _ request: SubscriptionRequest, target: ResolvedTarget, actor: String?, admission: SubscriptionQuota.Admission,
        sink: any EventSink
    )
        throws(ModerationError)
    {
        let caller = request.caller
        let subscription = Subscription(
            id: nextID.add(1, ordering: .relaxed).oldValue, app: caller.app,
            filter: SubscriptionFilter(target: target.filterTarget, kinds: request.kinds), sink: sink,
            afterSeq: request.afterSeq, actor: actor, admission: admission)
        // Invariant (no gap between the replay and the live stream): the subscription is in the
        // inbox before the log's snapshot is read below, so every batch committed after that
        // snapshot — every action after the replay's head — is queued after it, and the
        // dispatcher, which applies commands before the batches it takes with them, offers each
        // such action to the subscription (buffered while it replays). `promote` is applied on
        // the dispatcher too, between two batches: going live (sending the buffer) and joining
        // the indexes happen with no offer in between, so no live action falls between the
        // buffer and the indexes; actions the replay already sent are skipped by seq.
        guard inbox.send(.add(subscription)) else {
            subscription.endForShutdown { resumePoint(for: subscription) }
            return
        }
        sink.onClose { [weak self] closure in
            switch closure {
            case .gone: subscription.abandon()
            case .shuttingDown: subscription.endForShutdown { self?.resumePoint(for: subscription) ?? 0 }
            }
            self?.inbox.send(.remove(subscription))
        }
        // A stream that ended while this start waited for a replay thread (its connection closed
        // with thousands of starts queued) has just been abandoned and removed by the handler
        // above: reading the log for it would only keep the threads, and on PostgreSQL the
        // database, busy for nothing.
        guard !subscription.isEnded else { return }
        let head: UInt64
        do throws(ModerationError) {
            let plan = try service.withActionLog(app: caller.app) { (log) throws(ModerationError) -> ReplayPlan in
                if let actor { try log.requireNotBannedFromApp(actor) }
                try permit(target, actor: actor)
                try authorize(target, caller: caller, log: log)
                return try start(subscription, target: target, request: request, log: log)
            }
            if let first = plan.firstSeq { try replay(subscription, app: caller.app, from: first, through: plan.head) }
            head = plan.head
        } catch {
            subscription.abandon()
            inbox.send(.remove(subscription))
            throw error
        }
        inbox.send(.promote(subscription, head: head))
    }

    /// Where a subscription that ends before it started resumes: its after_seq, or, for one
    /// that asked for live actions only, the log's head now (0 when the log cannot be read).
    private func resumePoint(for subscription: Subscription) -> UInt64 {
        if let afterSeq = subscription.afterSeq { return afterSeq }
        return
            (try? service.withActionLog(app: subscription.app) { (log) throws(ModerationError) in try log.headSeq() })
            ?? 0
    }

    // MARK: Dispatching (on the dispatcher thread only)

    private func apply(_ command: DispatcherInbox.Command, to registry: Registry) {
        switch command {
        case .add(let subscription):
            registry.addReplaying(subscription)
        case .promote(let subscription, let head):
            subscription.goLive(after: head)
            registry.promote(subscription, memberOf: subscription.trackedGroups)
        case .remove(let subscription):
            registry.remove(subscription)
        case .endAll:
            endAll(registry)
        case .barrier(let done):
            done.signal()
        }
    }

    /// Waits, between two actions, while an event loop has not yet taken what the fan-out handed
    /// its connections (`LoopBacklog`), for at most `loopWaitLimit` pauses of 100 µs: the fan-out
    /// then goes as fast as the loops write, and subscribers are not cut as slow consumers for
    /// frames the server itself has not yet got to. A loop that stays behind longer than that is
    /// waited for no more (the streams' own limits still apply).
    private func waitForLoops() {
        var pauses = 0
        while LoopBacklog.isBehind, pauses < Self.loopWaitLimit {
            usleep(100)
            pauses += 1
        }
    }

    /// Pauses of 100 µs the dispatcher waits at most for the loops before an action: about 0.1 s.
    static let loopWaitLimit = 1_000

    private func endAll(_ registry: Registry) {
        let all = registry.all
        registry.removeAll()
        for subscription in all { subscription.endForShutdown { resumePoint(for: subscription) } }
    }

    private func dispatch(_ batch: [ActionRecord], _ registry: Registry) {
        var ended: [Subscription] = []
        for action in batch {
            waitForLoops()
            // Encoded once, at the first candidate (never empty: an action has a seq). Not an
            // optional: unwrapping and storing it back per subscriber cost a retain and a release.
            var encoded: [UInt8] = []
            // One action's fan-out is handed over whole: each event loop is woken once it is,
            // and takes all of its connections' frames of it in one turn (one write each). A
            // batch of many actions goes action by action, so a loop writes between them and a
            // connection never holds a whole commit's events unwritten at once.
            WakeDeferral.batch {
                registry.forEachCandidate(of: action) { subscription in
                    if encoded.isEmpty { encoded = encode(action) }
                    if !subscription.offer(action, encoded: encoded) { ended.append(subscription) }
                }
            }
            for subscription in ended { registry.remove(subscription) }
            ended.removeAll(keepingCapacity: true)
            registry.track(action)
        }
        // A batch may hold several apps' actions (one commit of many writers' writes).
        dispatched.withLock { seqs in
            for action in batch where action.seq > seqs[action.app, default: 0] { seqs[action.app] = action.seq }
        }
    }
}
