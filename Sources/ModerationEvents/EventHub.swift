public import Moderation
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
/// `subscribe` replays from the log first when asked to (`afterSeq`), buffering live actions
/// meanwhile, then goes live: no gap and no duplicate across the switch.
public final class EventHub: Sendable {
    private let service: ModerationService
    private let encode: @Sendable (ActionRecord) -> [UInt8]
    private let registry = Mutex(Registry())
    private let queue = BatchQueue()
    private let nextID = Atomic<UInt64>(1)
    private let dispatcher = Mutex<WorkerThread?>(nil)
    private let replays: ReplayThreads

    /// Actions read per page while replaying.
    static let replayPageSize = 500

    /// - Parameters:
    ///   - encode: the wire encoding of one event (the RPC adapter's message), made once per
    ///     action and shared by every subscriber.
    ///   - replayThreads: threads that start subscriptions for `startSubscription`; as many
    ///     subscribers whose connections stall during their replay make later subscriptions wait
    ///     (up to the replay's drain timeout), nothing else.
    public init(
        service: ModerationService, encode: @escaping @Sendable (ActionRecord) -> [UInt8], replayThreads: Int = 8
    ) {
        self.service = service
        self.encode = encode
        replays = ReplayThreads(count: replayThreads)
        let queue = self.queue
        service.addCommitListener { batch in queue.push(batch) }
        let thread = WorkerThread(name: "mod-events") { [self] in
            while let batch = queue.pop() { dispatch(batch) }
        }
        dispatcher.withLock { $0 = thread }
    }

    /// Live subscriptions.
    public var subscriptionCount: Int { registry.withLock { $0.count } }

    /// Queues a committed batch for delivery (normally called by the service's commit listener).
    public func publish(_ batch: [ActionRecord]) { queue.push(batch) }

    /// Starts a subscription on one of the hub's replay threads (see `subscribe`); returns at once.
    /// `refused` gets the error when the subscription is not allowed or the cursor has expired
    /// (nothing was sent then).
    public func startSubscription(
        _ request: SubscriptionRequest, sink: any EventSink, refused: @escaping @Sendable (ModerationError) -> Void
    ) {
        replays.submit { [self] in
            do throws(ModerationError) {
                try subscribe(request, sink: sink)
            } catch {
                refused(error)
            }
        }
    }

    /// Starts a subscription: checks what the caller may follow, replays from the log when
    /// `afterSeq` is set, then goes live. Blocks while replaying, up to 10 s at a time while the
    /// subscriber's connection is full (`startSubscription` runs it on the hub's own threads).
    /// - Throws: `ModerationError` when the request is not allowed or the cursor has expired;
    ///   nothing was sent then.
    public func subscribe(_ request: SubscriptionRequest, sink: any EventSink) throws(ModerationError) {
        let caller = request.caller
        let target = try resolveTarget(request)
        let subscription = Subscription(
            id: nextID.add(1, ordering: .relaxed).oldValue, app: caller.app,
            filter: SubscriptionFilter(target: target.filterTarget, kinds: request.kinds), sink: sink,
            afterSeq: request.afterSeq)
        registry.withLock { $0.addReplaying(subscription) }
        sink.onClose { [weak self] closure in
            switch closure {
            case .gone: subscription.abandon()
            case .shuttingDown: subscription.endForShutdown { self?.resumePoint(for: subscription) ?? 0 }
            }
            self?.registry.withLock { $0.remove(subscription) }
        }
        let head: UInt64
        do throws(ModerationError) {
            let plan = try service.withActionLog(app: caller.app) { (log) throws(ModerationError) -> ReplayPlan in
                try authorize(target, caller: caller, log: log)
                return try start(subscription, target: target, request: request, log: log)
            }
            if let first = plan.firstSeq { try replay(subscription, app: caller.app, from: first, through: plan.head) }
            head = plan.head
        } catch {
            registry.withLock { $0.remove(subscription) }
            subscription.abandon()
            throw error
        }
        registry.withLock { registry in
            // Under the registry lock the dispatcher is not between candidates and offers, so
            // no live action falls between the buffer being drained and the indexes taking over.
            subscription.goLive(after: head)
            registry.promote(subscription, memberOf: subscription.trackedGroups)
        }
    }

    /// Ends every subscription with UNAVAILABLE and where to resume, and stops the dispatcher.
    public func shutdown() {
        let all = registry.withLock { registry in
            defer { registry = Registry() }
            return registry.all
        }
        for subscription in all { subscription.endForShutdown { resumePoint(for: subscription) } }
        replays.shutdown()
        queue.close()
        dispatcher.withLock { $0 }?.join()
    }

    /// Where a subscription that ends before it started resumes: its after_seq, or, for one
    /// that asked for live actions only, the log's head now (0 when the log cannot be read).
    private func resumePoint(for subscription: Subscription) -> UInt64 {
        if let afterSeq = subscription.afterSeq { return afterSeq }
        return
            (try? service.withActionLog(app: subscription.app) { (log) throws(ModerationError) in try log.headSeq() })
            ?? 0
    }

    // MARK: Subscribing

    private enum ResolvedTarget {
        case user(String)
        case groups(Set<String>)
        case app

        var filterTarget: SubscriptionFilter.Target {
            switch self {
            case .user(let uid): .user(uid: uid, memberOf: [])
            case .groups(let guids): .groups(guids)
            case .app: .app
            }
        }
    }

    private func resolveTarget(_ request: SubscriptionRequest) throws(ModerationError) -> ResolvedTarget {
        let actor = request.caller.actor
        switch request.target {
        case nil:
            guard let actor else {
                throw ModerationError(
                    .invalidArgument, "a subscription needs a target: set user_uid, guids or whole_app, or on_behalf_of"
                )
            }
            return .user(try Validation.identifier(actor, field: "on_behalf_of"))
        case .user(let uid)?:
            let uid = try Validation.identifier(uid, field: "user_uid")
            if let actor, try Validation.identifier(actor, field: "on_behalf_of") != uid {
                throw ModerationError(.permissionDenied, "\(actor) may not subscribe to the events of user \(uid)")
            }
            return .user(uid)
        case .groups(let guids)?:
            guard !guids.isEmpty, guids.count <= 100 else {
                throw ModerationError(.invalidArgument, "guids: give 1 to 100 groups")
            }
            var normalized: Set<String> = []
            for guid in guids { normalized.insert(try Validation.identifier(guid, field: "guids")) }
            return .groups(normalized)
        case .app?:
            if let actor {
                throw ModerationError(
                    .permissionDenied, "whole-app subscriptions are for the app only; \(actor) may not make one")
            }
            return .app
        }
    }

    private func authorize(_ target: ResolvedTarget, caller: Caller, log: ActionLogSnapshot) throws(ModerationError) {
        switch target {
        case .app:
            break
        case .user(let uid):
            guard try log.userExists(uid) else { throw ModerationError(.uidNotFound, "user \(uid) not found") }
        case .groups(let guids):
            for guid in guids.sorted() {
                guard let type = try log.groupType(guid) else {
                    throw ModerationError(.groupNotFound, "group \(guid) not found")
                }
                if let actor = caller.actor, try log.scope(of: actor, inGroup: guid) == nil {
                    // Visibility (step 2) before membership (step 3): a private group does not
                    // exist for a non-member.
                    if type == .private { throw ModerationError(.groupNotFound, "group \(guid) not found") }
                    throw ModerationError(.groupNotJoined, "user \(actor) is not a member of group \(guid)")
                }
            }
        }
    }

    /// Where a subscription's replay runs: from `firstSeq` (nil: no replay) through `head`, the
    /// seq the live stream continues from.
    private struct ReplayPlan {
        var firstSeq: UInt64?
        var head: UInt64
    }

    /// Sets where `subscription` starts and what it admits, from one snapshot of the log: its
    /// head, and for a user's subscription the groups the user was in at `request.afterSeq`.
    private func start(
        _ subscription: Subscription, target: ResolvedTarget, request: SubscriptionRequest, log: ActionLogSnapshot
    ) throws(ModerationError) -> ReplayPlan {
        let head = try log.headSeq()
        var filter = SubscriptionFilter(target: target.filterTarget, kinds: request.kinds)
        guard let afterSeq = request.afterSeq, afterSeq < head else {
            if case .user(let uid) = target {
                filter.target = .user(uid: uid, memberOf: Set(try log.groups(of: uid)))
            }
            subscription.start(at: max(head, request.afterSeq ?? 0), filter: filter)
            return ReplayPlan(firstSeq: nil, head: head)
        }
        let oldest = try log.oldestRetainedSeq()
        guard afterSeq + 1 >= oldest else {
            throw ModerationError(
                .cursorExpired,
                "after_seq \(afterSeq) is older than the action log's retention (the oldest retained seq is \(oldest))")
        }
        if case .user(let uid) = target {
            // Membership at `afterSeq`: today's, with the user's changes since then undone.
            var changes: [ActionRecord] = []
            var cursor = afterSeq
            while cursor < head {
                let page = try log.actions(afterSeq: cursor, limit: Self.replayPageSize)
                for action in page where action.seq <= head && SubscriptionFilter.changesMembership(action, of: uid) {
                    changes.append(action)
                }
                guard let last = page.last, last.seq > cursor else { break }
                cursor = last.seq
            }
            let now = Set(try log.groups(of: uid))
            let then = try SubscriptionFilter.rewind(now, for: uid, over: changes) {
                (guid, seq) throws(ModerationError) in
                try log.wasMember(uid, of: guid, before: seq)
            }
            filter.target = .user(uid: uid, memberOf: then)
        }
        subscription.start(at: afterSeq, filter: filter)
        return ReplayPlan(firstSeq: afterSeq + 1, head: head)
    }

    /// Sends the log's actions `first...head` to `subscription`, one page per read snapshot: a
    /// replay waits for a slow subscriber (up to 10 s at a time), and a snapshot held that long
    /// would keep SQLite from checkpointing its WAL, which then grows with every write. The log
    /// only grows at its head, so the pages join up; should retention drop actions not yet sent,
    /// the replay fails with `ERR_CURSOR_EXPIRED` rather than skip them.
    private func replay(_ subscription: Subscription, app: String, from first: UInt64, through head: UInt64)
        throws(ModerationError)
    {
        var next = first
        var open = true
        while next <= head && open {
            let page = try service.withActionLog(app: app) { (log) throws(ModerationError) -> [ActionRecord] in
                let page = try log.actions(afterSeq: next - 1, limit: Self.replayPageSize)
                if page.first?.seq != next, try next < log.oldestRetainedSeq() {
                    throw ModerationError(
                        .cursorExpired, "the action log's retention dropped seq \(next) while it was being replayed")
                }
                return page
            }
            guard let last = page.last else { return }
            for action in page where action.seq <= head && open {
                open = subscription.replay(action, encoded: encode(action))
            }
            next = last.seq + 1
        }
    }

    // MARK: Dispatching

    private func dispatch(_ batch: [ActionRecord]) {
        registry.withLock { registry in
            for action in batch {
                let candidates = registry.candidates(for: action)
                guard !candidates.isEmpty else { continue }
                let encoded = encode(action)
                var ended: [Subscription] = []
                for subscription in candidates where !subscription.offer(action, encoded: encoded) {
                    ended.append(subscription)
                }
                for subscription in ended { registry.remove(subscription) }
                registry.track(action)
            }
        }
    }
}
