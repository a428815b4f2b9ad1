internal import Moderation

/// What the commit handler is given: every action of every app, in seq order per app, each once —
/// whichever writer (or, with other instances, whichever server) committed it.
///
/// The feed remembers per app the seq it has delivered through. A batch's actions that start
/// right after it are delivered as they are; when they start later, the seqs in between were
/// committed by another writer first (the app's lock orders an app's commits, so they are all
/// committed by now), and are read from the log before them. Actions at or below it (a batch of
/// another writer that arrives after its successor filled the gap) are not delivered again.
/// Commits of other instances are followed by `catchUp`, which the store's `CommitWatcher` asks
/// for when one is notified or polled.
///
/// An app nobody follows (`follows` false when its actions come) is passed over: its actions are
/// marked delivered without being read or handed out. A follower counted before it reads the
/// log's head needs none of them — they were committed before the feed looked, so that head is
/// past them — and is handed every action after it, read when the app is next caught up.
///
/// Invariant (no gap, no duplicate): `delivered[app]` only grows, and only past actions handed
/// out in order — or past seqs the log no longer holds (pruned), or that nobody followed. A read
/// that fails leaves it where it was and remembers how far the app is known to be committed
/// (`behind`), so the actions are read again at the next catch-up instead of being skipped.
struct CommitFeed {
    /// Reads an app's actions with seqs in `after + 1 ... through`, in seq order (a page at most).
    typealias LogReader = (_ app: String, _ after: UInt64, _ through: UInt64) throws(ModerationError) -> [ActionRecord]

    /// Per app name, the last seq delivered: at first each app's head when the store opened
    /// (nothing before it is delivered); an app first seen later starts at 0.
    private(set) var delivered: [String: UInt64]
    /// Per app, the highest seq known to be committed but not delivered, because reading the log
    /// failed (the database unreachable): the next catch-up of the app reads through it.
    private(set) var behind: [String: UInt64] = [:]

    init(delivered: [String: UInt64]) {
        self.delivered = delivered
    }

    /// The actions to hand to the commit handler for a committed batch (`actions`, in seq order
    /// per app): the missing ones read with `read` first, those already delivered left out, the
    /// apps nobody `follows` passed over. When the missing ones cannot be read, the app's actions
    /// are held back (read from the log at its next catch-up), never delivered after a gap.
    /// - Returns: the actions, and how many were read from the log.
    mutating func deliverable(
        _ actions: [ActionRecord], follows: (String) -> Bool, read: LogReader
    ) -> (actions: [ActionRecord], read: Int) {
        var byApp: [(app: String, actions: [ActionRecord])] = []
        for action in actions {
            if let index = byApp.firstIndex(where: { $0.app == action.app }) {
                byApp[index].actions.append(action)
            } else {
                byApp.append((action.app, [action]))
            }
        }
        var out: [ActionRecord] = []
        out.reserveCapacity(actions.count)
        var readCount = 0
        for (app, appActions) in byApp {
            let first = appActions[0].seq
            let last = appActions[appActions.count - 1].seq
            guard follows(app) else {
                pass(app: app, through: last)
                continue
            }
            let missing = catchUp(app: app, through: first - 1, read: read)
            readCount += missing.count
            out += missing
            let through = delivered[app] ?? 0
            guard through >= first - 1 else {
                behind[app] = max(behind[app] ?? 0, last)
                continue
            }
            for action in appActions where action.seq > through { out.append(action) }
            delivered[app] = max(through, last)
            if let known = behind[app], known <= last { behind[app] = nil }
        }
        return (out, readCount)
    }

    /// Reads what was committed to `app` after the last delivered seq, through `through` (or
    /// further, when the app is known to be `behind`), and marks it delivered. A read that fails
    /// (the database unreachable) stops there: the rest is read at the next catch-up.
    mutating func catchUp(app: String, through: UInt64, read: LogReader) -> [ActionRecord] {
        let target = max(through, behind[app] ?? 0)
        var after = delivered[app] ?? 0
        var missing: [ActionRecord] = []
        var failed = false
        while after < target {
            let page: [ActionRecord]
            do {
                page = try read(app, after, target)
            } catch {
                failed = true
                break
            }
            // Nothing left in the range: the rest was pruned; its seqs are not waited for.
            guard let last = page.last else {
                after = target
                break
            }
            missing += page
            after = last.seq
        }
        delivered[app] = max(delivered[app] ?? 0, after)
        if failed {
            behind[app] = target
        } else {
            behind[app] = nil
        }
        return missing
    }

    /// Catches up every app left behind by a failed read (passes over those nobody follows now).
    mutating func retryBehind(follows: (String) -> Bool, read: LogReader) -> [ActionRecord] {
        var out: [ActionRecord] = []
        for (app, target) in behind {
            if follows(app) {
                out += catchUp(app: app, through: target, read: read)
            } else {
                pass(app: app, through: target)
            }
        }
        return out
    }

    /// Marks `app`'s actions through `through` delivered without reading them: nobody follows
    /// the app (see the type's comment).
    mutating func pass(app: String, through: UInt64) {
        delivered[app] = max(delivered[app] ?? 0, through)
        if let known = behind[app], known <= through { behind[app] = nil }
    }

    /// Records actions as delivered without delivering them (no handler is set).
    mutating func skip(_ actions: [ActionRecord]) {
        for action in actions { pass(app: action.app, through: action.seq) }
    }
}
