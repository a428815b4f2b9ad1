import Moderation
import Testing

@testable import ModerationPostgres

/// The commit feed on its own, over a log in memory: whatever order batches and catch-ups come
/// in, and whether reads fail, what it hands out per app is 1, 2, 3, … once each.
@Suite("Commit feed: batches and catch-ups in seq order, each action once")
struct CommitFeedTests {
    /// A log of `count` actions of app "app" (seqs 1…count), and a reader over it that fails
    /// while `failing` is set.
    final class Log {
        var actions: [ActionRecord]
        var failing = false
        var reads = 0

        init(count: Int, app: String = "app") {
            actions = (1...UInt64(count)).map { seq in
                var action = ActionRecord(
                    app: app, kind: .joined, actionBy: User(uid: "owner"), actionOn: User(uid: "u\(seq)"),
                    group: Group(guid: "g", name: "g", type: .public, owner: "owner"), timestamp: 0)
                action.seq = seq
                return action
            }
        }

        /// Pages of at most three, as the store's reader returns at most a page.
        func read(_ app: String, _ after: UInt64, _ through: UInt64) throws(ModerationError) -> [ActionRecord] {
            reads += 1
            if failing { throw .storeUnavailable("the database is down") }
            return Array(actions.filter { $0.app == app && $0.seq > after && $0.seq <= through }.prefix(3))
        }

        func batch(_ seqs: ClosedRange<UInt64>) -> [ActionRecord] {
            actions.filter { seqs.contains($0.seq) }
        }
    }

    let everyApp: (String) -> Bool = { _ in true }

    @Test("a batch after another writer's commits: the gap read first; a late batch not delivered again")
    func gapAndLateBatch() {
        let log = Log(count: 10)
        var feed = CommitFeed(delivered: ["app": 0])
        var seen: [UInt64] = []
        seen += feed.deliverable(log.batch(1...2), follows: everyApp, read: log.read).actions.map(\.seq)
        // 3…5 were committed by another writer whose batch comes after this one's 6…7.
        let (actions, read) = feed.deliverable(log.batch(6...7), follows: everyApp, read: log.read)
        seen += actions.map(\.seq)
        #expect(read == 3)
        seen += feed.deliverable(log.batch(3...5), follows: everyApp, read: log.read).actions.map(\.seq)
        #expect(seen == Array(1...7))
    }

    @Test("a catch-up (another instance's commits) and this instance's batch that overlaps it: each seq once")
    func catchUpThenOwnBatch() {
        let log = Log(count: 9)
        var feed = CommitFeed(delivered: ["app": 2])
        var seen: [UInt64] = []
        // The watcher reports head 7 before this instance's own batch 6…7 reaches the feed.
        seen += feed.catchUp(app: "app", through: 7, read: log.read).map(\.seq)
        seen += feed.deliverable(log.batch(6...7), follows: everyApp, read: log.read).actions.map(\.seq)
        seen += feed.deliverable(log.batch(8...9), follows: everyApp, read: log.read).actions.map(\.seq)
        #expect(seen == Array(3...9), "only what came after the head at open, in order, once")
    }

    @Test("reads failing: later actions are held back, then read through at the next catch-up; none skipped")
    func failedReadsHoldBack() {
        let log = Log(count: 12)
        var feed = CommitFeed(delivered: ["app": 0])
        var seen: [UInt64] = []
        seen += feed.deliverable(log.batch(1...2), follows: everyApp, read: log.read).actions.map(\.seq)
        log.failing = true
        // Another instance committed 3…5; the watcher's catch-up cannot read them.
        seen += feed.catchUp(app: "app", through: 5, read: log.read).map(\.seq)
        // This instance's own batch 6…8 would leave a gap: it is held back, not delivered.
        seen += feed.deliverable(log.batch(6...8), follows: everyApp, read: log.read).actions.map(\.seq)
        #expect(seen == [1, 2])
        #expect(feed.behind["app"] == 8)
        // Nothing new is notified; the next poll retries the apps left behind.
        seen += feed.retryBehind(follows: everyApp, read: log.read).map(\.seq)
        #expect(seen == [1, 2], "still down")
        log.failing = false
        seen += feed.retryBehind(follows: everyApp, read: log.read).map(\.seq)
        seen += feed.deliverable(log.batch(9...12), follows: everyApp, read: log.read).actions.map(\.seq)
        #expect(seen == Array(1...12))
        #expect(feed.behind.isEmpty)
    }

    @Test("a pruned prefix is not waited for; two apps are followed apart")
    func prunedAndTwoApps() {
        let log = Log(count: 8)
        log.actions.removeFirst(4)
        log.actions += Log(count: 3, app: "other").actions
        var feed = CommitFeed(delivered: [:])
        var seen: [String] = []
        for action in feed.catchUp(app: "app", through: 8, read: log.read) { seen.append("app:\(action.seq)") }
        for action in feed.catchUp(app: "other", through: 3, read: log.read) { seen.append("other:\(action.seq)") }
        #expect(seen == ["app:5", "app:6", "app:7", "app:8", "other:1", "other:2", "other:3"])
        #expect(feed.delivered == ["app": 8, "other": 3])
        #expect(feed.catchUp(app: "app", through: 8, read: log.read).isEmpty, "nothing twice")
    }

    @Test("an app nobody follows is passed over unread; once followed, every action after is handed out")
    func unfollowedAppPassedOver() {
        let log = Log(count: 9)
        var feed = CommitFeed(delivered: ["app": 0])
        let nobody: (String) -> Bool = { _ in false }
        // This instance's own batch and another instance's commits, while nobody follows the app.
        #expect(feed.deliverable(log.batch(1...2), follows: nobody, read: log.read).actions.isEmpty)
        feed.pass(app: "app", through: 5)
        #expect(log.reads == 0, "nothing read for an app nobody follows")
        #expect(feed.delivered["app"] == 5)
        // A subscriber counted now reads a head of 5 or later: everything after 5 reaches it.
        let (actions, read) = feed.deliverable(log.batch(8...9), follows: everyApp, read: log.read)
        #expect(actions.map(\.seq) == [6, 7, 8, 9])
        #expect(read == 2)
    }

    @Test("an app left behind by failed reads that nobody follows any more is passed over at the retry")
    func behindAndUnfollowed() {
        let log = Log(count: 6)
        var feed = CommitFeed(delivered: ["app": 0])
        log.failing = true
        #expect(feed.catchUp(app: "app", through: 4, read: log.read).isEmpty)
        #expect(feed.behind["app"] == 4)
        let reads = log.reads
        log.failing = false
        #expect(feed.retryBehind(follows: { _ in false }, read: log.read).isEmpty)
        #expect(log.reads == reads)
        #expect(feed.behind.isEmpty)
        #expect(feed.deliverable(log.batch(5...6), follows: everyApp, read: log.read).actions.map(\.seq) == [5, 6])
    }
}
