import Moderation

/// The hub's subscriptions, indexed so an action reaches only those it may concern.
///
/// Confined to the hub's dispatcher thread: it takes no lock, and event loops and replay
/// threads change it only through the dispatcher's inbox. A change costs O(1) amortised plus
/// the index keys of the one subscription it concerns (its groups, its user, the groups its
/// user belongs to), never the number of subscriptions: indexes are classes and dictionaries
/// changed in place, never copied, and each subscription's entry records the keys it sits
/// under, so removing it touches only those.
///
/// A user subscription is indexed under its user and under the groups the user belongs to; the
/// index follows the log (`track`) exactly as each subscription's own filter does, and the
/// filter has the last word. A group subscription opened by a user is also indexed under that
/// user (`byActor`), so that the user's ban from the app reaches it and ends it.
final class Registry {
    private var apps: [String: AppSubscriptions] = [:]
    /// Every subscription held, with where it is indexed.
    private var entries: [UInt64: Entry] = [:]

    /// Where one subscription sits in its app's indexes.
    private final class Entry {
        enum Place {
            case replaying
            case app
            case groups
            case user(String)
        }

        let subscription: Subscription
        var place = Place.replaying
        /// The group keys it is indexed under: the groups it follows (`.groups`), or the groups
        /// its user belongs to (`.user`).
        var groups: Set<String> = []
        /// The acting user it is indexed under in `byActor` (`.groups` opened by a user).
        var actor: String?

        init(_ subscription: Subscription) { self.subscription = subscription }
    }

    /// One app's indexes: a class, so that changing one of them copies none of them.
    private final class AppSubscriptions {
        let replaying = SubscriptionSet()
        let everything = SubscriptionSet()
        var byGroup: [String: SubscriptionSet] = [:]
        var byUser: [String: SubscriptionSet] = [:]
        var byMemberGroup: [String: SubscriptionSet] = [:]
        /// Group subscriptions by the user who opened them: only an `appBanned` action looks here.
        var byActor: [String: SubscriptionSet] = [:]

        var isEmpty: Bool {
            replaying.isEmpty && everything.isEmpty && byGroup.isEmpty && byUser.isEmpty && byMemberGroup.isEmpty
                && byActor.isEmpty
        }
    }

    var count: Int { entries.count }

    /// Keys of the group, user and member-group indexes over every app: bounded by the
    /// subscriptions open (and what they follow), however many groups and users have come and gone.
    var indexKeys: Int {
        apps.values.reduce(0) { $0 + $1.byGroup.count + $1.byUser.count + $1.byMemberGroup.count + $1.byActor.count }
    }

    var all: [Subscription] { entries.values.map(\.subscription) }

    /// Forgets every subscription.
    func removeAll() {
        apps = [:]
        entries = [:]
    }

    /// A subscription whose replay is running: it gets every action of its app (and buffers them).
    func addReplaying(_ subscription: Subscription) {
        guard entries[subscription.id] == nil else { return }
        entries[subscription.id] = Entry(subscription)
        app(subscription.app).replaying.insert(subscription)
    }

    /// The replay is done: index the subscription by what it follows (`memberOf`: its user's
    /// groups as its filter has tracked them). One that has ended meanwhile is dropped.
    func promote(_ subscription: Subscription, memberOf: Set<String>) {
        let id = subscription.id
        guard let entry = entries[id], case .replaying = entry.place, let app = apps[subscription.app] else { return }
        guard !subscription.isEnded else {
            remove(subscription)
            return
        }
        app.replaying.remove(id)
        switch subscription.followed {
        case .app:
            entry.place = .app
            app.everything.insert(subscription)
        case .groups(let guids):
            entry.place = .groups
            entry.groups = guids
            for guid in guids { app.byGroup.set(subscription, id: id, under: guid) }
            if let actor = subscription.actor {
                entry.actor = actor
                app.byActor.set(subscription, id: id, under: actor)
            }
        case .user(let uid, _):
            entry.place = .user(uid)
            entry.groups = memberOf
            app.byUser.set(subscription, id: id, under: uid)
            for guid in memberOf { app.byMemberGroup.set(subscription, id: id, under: guid) }
        }
    }

    /// Drops a subscription from every index it sits under (nothing when it is not held).
    func remove(_ subscription: Subscription) {
        let id = subscription.id
        guard let entry = entries.removeValue(forKey: id), let app = apps[subscription.app] else { return }
        switch entry.place {
        case .replaying:
            app.replaying.remove(id)
        case .app:
            app.everything.remove(id)
        case .groups:
            for guid in entry.groups { app.byGroup.set(nil, id: id, under: guid) }
            if let actor = entry.actor { app.byActor.set(nil, id: id, under: actor) }
        case .user(let uid):
            app.byUser.set(nil, id: id, under: uid)
            for guid in entry.groups { app.byMemberGroup.set(nil, id: id, under: guid) }
        }
        if app.isEmpty { apps[subscription.app] = nil }
    }

    /// Calls `body` with every subscription `action` may concern, each once (in no set order).
    /// `body` must not change the registry.
    func forEachCandidate(of action: ActionRecord, _ body: (Subscription) -> Void) {
        guard let app = apps[action.app] else { return }
        app.replaying.forEachSubscription(body)
        app.everything.forEachSubscription(body)
        let guid = action.group.guid
        // A group subscription sits once under each of its groups, and an action has one group.
        app.byGroup[guid]?.forEachSubscription(body)
        // The group subscriptions a ban from the app ends (an app-wide action is under no group).
        if action.kind == .appBanned, let uid = action.actionOn?.uid {
            app.byActor[uid]?.forEachSubscription(body)
        }
        // A user subscription may sit under several of these: its user is the action's target
        // or actor, and belongs to the action's group.
        var userIndexes: [SubscriptionSet] = []
        if let subscriptions = app.byMemberGroup[guid] { userIndexes.append(subscriptions) }
        if let uid = action.actionOn?.uid, let subscriptions = app.byUser[uid] { userIndexes.append(subscriptions) }
        if action.actionBy.uid != action.actionOn?.uid, let subscriptions = app.byUser[action.actionBy.uid] {
            userIndexes.append(subscriptions)
        }
        if userIndexes.count == 1 {
            userIndexes[0].forEachSubscription(body)
            return
        }
        var seen: Set<UInt64> = []
        for subscriptions in userIndexes {
            subscriptions.forEachSubscription { subscription in
                if seen.insert(subscription.id).inserted { body(subscription) }
            }
        }
    }

    /// Every subscription `action` may concern (each once, in no set order).
    func candidates(for action: ActionRecord) -> [Subscription] {
        var found: [Subscription] = []
        forEachCandidate(of: action) { found.append($0) }
        return found
    }

    /// Moves user subscriptions between groups as `action` changes who belongs where.
    ///
    /// The index is set from each subscription's own tracked membership (after it was offered
    /// `action`), not from the action: an action a subscription already had from its replay may
    /// still reach the dispatcher afterwards, and must not move the index back in time.
    func track(_ action: ActionRecord) {
        guard let app = apps[action.app] else { return }
        let guid = action.group.guid
        switch action.kind {
        case .created, .joined, .added, .inviteAccepted, .joinRequestApproved, .left, .kicked, .banned:
            guard let uid = action.actionOn?.uid else { return }
            // Read first, changed after: the index is not iterated while it changes.
            let concerned = app.byUser[uid]?.all ?? []
            for subscription in concerned {
                guard let entry = entries[subscription.id] else { continue }
                if subscription.trackedGroups.contains(guid) {
                    if entry.groups.insert(guid).inserted {
                        app.byMemberGroup.set(subscription, id: subscription.id, under: guid)
                    }
                } else if entry.groups.remove(guid) != nil {
                    app.byMemberGroup.set(nil, id: subscription.id, under: guid)
                }
            }
        case .deleted:
            let leaving = app.byMemberGroup[guid]?.all.filter { !$0.trackedGroups.contains(guid) } ?? []
            for subscription in leaving {
                entries[subscription.id]?.groups.remove(guid)
                app.byMemberGroup.set(nil, id: subscription.id, under: guid)
            }
        case .updated, .unbanned, .scopeChanged, .ownershipTransferred, .muted, .unmuted, .frozen, .unfrozen,
            .userDeleted, .invited, .inviteDeclined, .inviteRevoked, .joinRequested,
            .joinRequestRejected, .joinRequestCancelled, .reported, .reportResolved, .appBanned, .appUnbanned,
            .contentRulesChanged:
            return
        }
    }

    /// The indexes of `app`, made on first use.
    private func app(_ app: String) -> AppSubscriptions {
        if let existing = apps[app] { return existing }
        let made = AppSubscriptions()
        apps[app] = made
        return made
    }
}

/// The subscriptions under one index key, in an array the dispatcher walks in order.
///
/// The fan-out reads thousands of subscriptions per event, most of them out of cache: walked
/// from an array, the ones a few places ahead are known, and asked for (`MemoryHint`) while the
/// current one is offered the event; and the walk takes no reference on any of them.
///
/// Invariant: it holds its subscriptions unretained. Each is held by the registry's `entries`
/// for as long as it is in a set: `Registry.remove` takes it out of both in one call, and
/// `removeAll` drops the sets with the entries.
final class SubscriptionSet {
    private var members: ContiguousArray<Unmanaged<Subscription>> = []
    /// Where each subscription sits in `members`.
    private var positions: [UInt64: Int] = [:]

    /// How far ahead the walk asks for a subscription, then (half as far) for its sink's state,
    /// then (a quarter as far) for what that state points at, then (the next one) for what that
    /// points at: each read from the one before, which must have arrived by then.
    private static let lookahead = 8

    var isEmpty: Bool { members.isEmpty }

    /// Every subscription, retained (for changes to the indexes made while reading them).
    var all: [Subscription] { members.map { $0.takeUnretainedValue() } }

    func insert(_ subscription: Subscription) {
        guard positions[subscription.id] == nil else { return }
        positions[subscription.id] = members.count
        members.append(Unmanaged.passUnretained(subscription))
    }

    /// Drops the subscription with `id` (nothing when it is not here): the last one takes its place.
    func remove(_ id: UInt64) {
        guard let position = positions.removeValue(forKey: id) else { return }
        let last = members.removeLast()
        guard position < members.count else { return }
        members[position] = last
        positions[last._withUnsafeGuaranteedRef { $0.id }] = position
    }

    /// Calls `body` with each subscription in turn; `body` must not change the set.
    func forEachSubscription(_ body: (Subscription) -> Void) {
        members.withUnsafeBufferPointer { members in
            let count = members.count
            let (far, near, nearest) = (Self.lookahead, Self.lookahead / 2, Self.lookahead / 4)
            for index in 0..<min(far, count) { members[index]._withUnsafeGuaranteedRef { $0.prefetch() } }
            for index in 0..<count {
                if index + far < count { members[index + far]._withUnsafeGuaranteedRef { $0.prefetch() } }
                if index + near < count {
                    members[index + near]._withUnsafeGuaranteedRef { $0.prefetchSink(depth: 0) }
                }
                if index + nearest < count {
                    members[index + nearest]._withUnsafeGuaranteedRef { $0.prefetchSink(depth: 1) }
                }
                if index + 1 < count { members[index + 1]._withUnsafeGuaranteedRef { $0.prefetchSink(depth: 2) } }
                members[index]._withUnsafeGuaranteedRef { body($0) }
            }
        }
    }
}

extension Dictionary where Value == SubscriptionSet {
    /// Sets (or, with nil, clears) one subscription under `key`, and drops the key once nothing is
    /// left under it: groups and users come and go by the thousand, and an index that kept an
    /// empty entry for each would grow without end.
    fileprivate mutating func set(_ subscription: Subscription?, id: UInt64, under key: Key) {
        if let subscription {
            if let subscriptions = self[key] {
                subscriptions.insert(subscription)
            } else {
                let subscriptions = SubscriptionSet()
                subscriptions.insert(subscription)
                self[key] = subscriptions
            }
            return
        }
        guard let subscriptions = self[key] else { return }
        subscriptions.remove(id)
        if subscriptions.isEmpty { self[key] = nil }
    }
}
