import Moderation

/// Starting a subscription: what it may follow, where it starts, and its replay from the log.
extension EventHub {
    /// What a request follows, validated.
    enum ResolvedTarget {
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

    /// The request's acting user, validated (nil for the app).
    func actingUser(_ request: SubscriptionRequest) throws(ModerationError) -> String? {
        guard let actor = request.caller.actor else { return nil }
        return try Validation.identifier(actor, field: "on_behalf_of")
    }

    /// Validates what the request asks to follow (step 1; no store read: cheap enough for an
    /// event loop). Whether the caller may follow it is `permit`'s, after the ban from the app.
    func resolveTarget(_ request: SubscriptionRequest) throws(ModerationError) -> ResolvedTarget {
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
            return .user(try Validation.identifier(uid, field: "user_uid"))
        case .groups(let guids)?:
            guard !guids.isEmpty, guids.count <= 100 else {
                throw ModerationError(.invalidArgument, "guids: give 1 to 100 groups")
            }
            var normalized: Set<String> = []
            for guid in guids { normalized.insert(try Validation.identifier(guid, field: "guids")) }
            return .groups(normalized)
        case .app?:
            return .app
        }
    }

    /// Step 4: a user follows only themselves, or groups (whose membership `authorize` checks);
    /// whole-app subscriptions are the app's (`ERR_PERMISSION_DENIED`). `actor` is validated.
    func permit(_ target: ResolvedTarget, actor: String?) throws(ModerationError) {
        guard let actor else { return }
        switch target {
        case .user(let uid) where uid != actor:
            throw ModerationError(.permissionDenied, "\(actor) may not subscribe to the events of user \(uid)")
        case .app:
            throw ModerationError(
                .permissionDenied, "whole-app subscriptions are for the app only; \(actor) may not make one")
        case .user, .groups:
            return
        }
    }

    func authorize(_ target: ResolvedTarget, caller: Caller, log: ActionLogSnapshot) throws(ModerationError) {
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
    struct ReplayPlan {
        var firstSeq: UInt64?
        var head: UInt64
    }

    /// Sets where `subscription` starts and what it admits, from one snapshot of the log: its
    /// head, and for a user's subscription the groups the user was in at `request.afterSeq`.
    func start(
        _ subscription: Subscription, target: ResolvedTarget, request: SubscriptionRequest, log: ActionLogSnapshot
    ) throws(ModerationError) -> ReplayPlan {
        let head = try log.headSeq()
        let viewer: String? =
            switch target {
            case .user(let uid): uid
            case .groups: request.caller.actor
            case .app: nil
            }
        var filter = SubscriptionFilter(target: target.filterTarget, kinds: request.kinds, viewer: viewer)
        var moderatesNow: Set<String> = []
        if let viewer {
            let candidates: [String]
            switch target {
            case .user: candidates = try log.groups(of: viewer)
            case .groups(let guids): candidates = guids.sorted()
            case .app: candidates = []
            }
            for guid in candidates where try log.scope(of: viewer, inGroup: guid)?.rank.isModeratorOrAbove == true {
                moderatesNow.insert(guid)
            }
        }
        guard let afterSeq = request.afterSeq, afterSeq < head else {
            if case .user(let uid) = target {
                filter.target = .user(uid: uid, memberOf: Set(try log.groups(of: uid)))
            }
            filter.moderates = moderatesNow
            subscription.start(at: max(head, request.afterSeq ?? 0), head: head, filter: filter)
            return ReplayPlan(firstSeq: nil, head: head)
        }
        let oldest = try log.oldestRetainedSeq()
        guard afterSeq + 1 >= oldest else {
            throw ModerationError(
                .cursorExpired,
                "after_seq \(afterSeq) is older than the action log's retention (the oldest retained seq is \(oldest))")
        }
        if let viewer {
            // Membership and scopes at `afterSeq`: today's, with the viewer's changes since then
            // undone.
            var changes: [ActionRecord] = []
            var scopeChanges: [ActionRecord] = []
            var cursor = afterSeq
            while cursor < head {
                let page = try log.actions(afterSeq: cursor, limit: Self.replayPageSize)
                for action in page where action.seq <= head {
                    if SubscriptionFilter.changesMembership(action, of: viewer) { changes.append(action) }
                    if SubscriptionFilter.changesScope(action, of: viewer) { scopeChanges.append(action) }
                }
                guard let last = page.last, last.seq > cursor else { break }
                cursor = last.seq
            }
            filter.moderates = SubscriptionFilter.rewindScopes(moderatesNow, for: viewer, over: scopeChanges)
            guard case .user(let uid) = target else {
                subscription.start(at: afterSeq, head: head, filter: filter)
                return ReplayPlan(firstSeq: afterSeq + 1, head: head)
            }
            let now = Set(try log.groups(of: uid))
            let then = try SubscriptionFilter.rewind(now, for: uid, over: changes) {
                (guid, seq) throws(ModerationError) in
                try log.wasMember(uid, of: guid, before: seq)
            }
            filter.target = .user(uid: uid, memberOf: then)
        }
        subscription.start(at: afterSeq, head: head, filter: filter)
        return ReplayPlan(firstSeq: afterSeq + 1, head: head)
    }

    /// Sends the log's actions `first...head` to `subscription`, one page per read snapshot: a
    /// replay waits for a slow subscriber (up to 10 s at a time), and a snapshot held that long
    /// would keep SQLite from checkpointing its WAL, which then grows with every write. The log
    /// only grows at its head, so the pages join up; should retention drop actions not yet sent,
    /// the replay fails with `ERR_CURSOR_EXPIRED` rather than skip them.
    func replay(_ subscription: Subscription, app: String, from first: UInt64, through head: UInt64)
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
}
