import Moderation

/// The hub's subscriptions, indexed so an action reaches only those it may concern.
///
/// Confined to the hub's lock. A user subscription is indexed under its user and under the
/// groups the user belongs to; the index follows the log (`track`) exactly as each
/// subscription's own filter does, and the filter has the last word.
struct Registry {
    private var apps: [String: AppSubscriptions] = [:]

    private struct AppSubscriptions {
        var everything: [UInt64: Subscription] = [:]
        var byGroup: [String: [UInt64: Subscription]] = [:]
        var byUser: [String: [UInt64: Subscription]] = [:]
        var byMemberGroup: [String: [UInt64: Subscription]] = [:]
        var replaying: [UInt64: Subscription] = [:]
        var users: [UInt64: String] = [:]
        var groups: [UInt64: Set<String>] = [:]
    }

    var count: Int {
        apps.values.reduce(0) { $0 + $1.everything.count + $1.users.count + $1.groups.count + $1.replaying.count }
    }

    /// Keys of the group, user and member-group indexes over every app: bounded by the
    /// subscriptions open (and what they follow), however many groups and users have come and gone.
    var indexKeys: Int {
        apps.values.reduce(0) { $0 + $1.byGroup.count + $1.byUser.count + $1.byMemberGroup.count }
    }

    var all: [Subscription] {
        var result: [Subscription] = []
        for app in apps.values {
            result += app.everything.values
            result += app.replaying.values
            for subscriptions in app.byUser.values { result += subscriptions.values }
            for subscriptions in app.byGroup.values { result += subscriptions.values }
        }
        return result
    }

    /// A subscription whose replay is running: it gets every action of its app (and buffers them).
    mutating func addReplaying(_ subscription: Subscription) {
        apps[subscription.app, default: AppSubscriptions()].replaying[subscription.id] = subscription
    }

    /// The replay is done: index the subscription by what it follows.
    mutating func promote(_ subscription: Subscription, memberOf: Set<String>) {
        guard var app = apps[subscription.app], app.replaying.removeValue(forKey: subscription.id) != nil else {
            return
        }
        if !subscription.isEnded {
            switch subscription.followed {
            case .app:
                app.everything[subscription.id] = subscription
            case .groups(let guids):
                app.groups[subscription.id] = guids
                for guid in guids { app.byGroup.set(subscription, id: subscription.id, under: guid) }
            case .user(let uid, _):
                app.users[subscription.id] = uid
                app.byUser.set(subscription, id: subscription.id, under: uid)
                for guid in memberOf { app.byMemberGroup.set(subscription, id: subscription.id, under: guid) }
            }
        }
        apps[subscription.app] = app
    }

    mutating func remove(_ subscription: Subscription) {
        guard var app = apps[subscription.app] else { return }
        let id = subscription.id
        app.replaying[id] = nil
        app.everything[id] = nil
        if let guids = app.groups.removeValue(forKey: id) {
            for guid in guids { app.byGroup.set(nil, id: id, under: guid) }
        }
        if let uid = app.users.removeValue(forKey: id) {
            app.byUser.set(nil, id: id, under: uid)
            for guid in app.byMemberGroup.keys { app.byMemberGroup.set(nil, id: id, under: guid) }
        }
        apps[subscription.app] = app
    }

    /// Every subscription `action` may concern (each once).
    func candidates(for action: ActionRecord) -> [Subscription] {
        guard let app = apps[action.app] else { return [] }
        var found: [UInt64: Subscription] = app.replaying
        found.merge(app.everything) { a, _ in a }
        let guid = action.group.guid
        if let subscriptions = app.byGroup[guid] { found.merge(subscriptions) { a, _ in a } }
        if let subscriptions = app.byMemberGroup[guid] { found.merge(subscriptions) { a, _ in a } }
        if let uid = action.actionOn?.uid, let subscriptions = app.byUser[uid] {
            found.merge(subscriptions) { a, _ in a }
        }
        if let subscriptions = app.byUser[action.actionBy.uid] { found.merge(subscriptions) { a, _ in a } }
        return found.sorted { $0.key < $1.key }.map(\.value)
    }

    /// Moves user subscriptions between groups as `action` changes who belongs where.
    ///
    /// The index is set from each subscription's own tracked membership (after it was offered
    /// `action`), not from the action: an action a subscription already had from its replay may
    /// still reach the dispatcher afterwards, and must not move the index back in time.
    mutating func track(_ action: ActionRecord) {
        guard var app = apps[action.app] else { return }
        let guid = action.group.guid
        switch action.kind {
        case .created, .joined, .added, .left, .kicked, .banned:
            guard let uid = action.actionOn?.uid, let subscriptions = app.byUser[uid] else { return }
            for (id, subscription) in subscriptions {
                app.byMemberGroup.set(
                    subscription.trackedGroups.contains(guid) ? subscription : nil, id: id, under: guid)
            }
        case .deleted:
            guard let subscriptions = app.byMemberGroup[guid] else { return }
            for (id, subscription) in subscriptions where !subscription.trackedGroups.contains(guid) {
                app.byMemberGroup.set(nil, id: id, under: guid)
            }
        case .updated, .unbanned, .scopeChanged, .ownershipTransferred:
            return
        }
        apps[action.app] = app
    }
}

extension Dictionary where Value == [UInt64: Subscription] {
    /// Sets (or, with nil, clears) one subscription under `key`, and drops the key once nothing is
    /// left under it: groups and users come and go by the thousand, and an index that kept an
    /// empty entry for each would grow without end.
    fileprivate mutating func set(_ subscription: Subscription?, id: UInt64, under key: Key) {
        if let subscription {
            self[key, default: [:]][id] = subscription
            return
        }
        guard var subscriptions = removeValue(forKey: key) else { return }
        subscriptions[id] = nil
        if !subscriptions.isEmpty { self[key] = subscriptions }
    }
}
