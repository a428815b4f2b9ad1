internal import Moderation

/// What the commit handler is given: every action of every app, in seq order per app, each once —
/// whichever writer (or, with other instances, whichever server) committed it.
///
/// The feed remembers per app the seq it has delivered through. A batch's actions that start
/// right after it are delivered as they are; when they start later, the seqs in between were
/// committed by another writer first (the app's lock orders an app's commits, so they are all
/// committed by now), and are read from the log before them. Actions at or below it (a batch of
/// another writer that arrives after its successor filled the gap) are not delivered again.
///
/// Today a gap is only filled when this instance commits to the app next. Following other
/// instances' commits as they happen needs only a wake-up that calls `catchUp` (LISTEN/NOTIFY,
/// or a short poll of `apps.head_seq`): the reading by seq is here.
struct CommitFeed {
    /// Reads an app's actions with seqs in `after + 1 ... through`, in seq order (a page at most).
    typealias LogReader = (_ app: String, _ after: UInt64, _ through: UInt64) throws(ModerationError) -> [ActionRecord]

    /// Per app name, the last seq delivered: at first each app's head when the store opened
    /// (nothing before it is delivered); an app first seen later starts at 0.
    private(set) var delivered: [String: UInt64]

    /// The actions to hand to the commit handler for a committed batch (`actions`, in seq order
    /// per app): the missing ones read with `read` first, those already delivered left out.
    /// - Returns: the actions, and how many were read from the log.
    mutating func deliverable(_ actions: [ActionRecord], read: LogReader) -> (actions: [ActionRecord], read: Int) {
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
            let missing = catchUp(app: app, through: first - 1, read: read)
            readCount += missing.count
            out += missing
            let through = delivered[app] ?? 0
            for action in appActions where action.seq > through { out.append(action) }
            delivered[app] = max(through, appActions[appActions.count - 1].seq)
        }
        return (out, readCount)
    }

    /// Reads what was committed to `app` after the last delivered seq, through `through`, and
    /// marks it delivered. A read that fails (the database unreachable) gives up on the rest:
    /// the committed batch is not held back for it, and live subscribers miss those actions
    /// (a subscriber resuming with `after_seq` reads them from the log).
    mutating func catchUp(app: String, through: UInt64, read: LogReader) -> [ActionRecord] {
        var after = delivered[app] ?? 0
        var missing: [ActionRecord] = []
        while after < through {
            let page: [ActionRecord]
            do {
                page = try read(app, after, through)
            } catch {
                break
            }
            guard let last = page.last else { break }
            missing += page
            after = last.seq
        }
        // Seqs in a pruned prefix (or that a failed read missed) are not waited for again.
        delivered[app] = max(delivered[app] ?? 0, through)
        return missing
    }

    /// Records actions as delivered without delivering them (no handler is set).
    mutating func skip(_ actions: [ActionRecord]) {
        for action in actions { delivered[action.app] = max(delivered[action.app] ?? 0, action.seq) }
    }
}
