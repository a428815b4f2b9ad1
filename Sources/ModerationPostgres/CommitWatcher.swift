internal import Glibc
internal import Moderation
internal import Synchronization
internal import ThreadSupport

/// Follows the other instances' commits: one thread with its own connection, `LISTEN`ing on the
/// schema's channel (`CommitNotifier`), that reports the apps' committed heads to the completer,
/// which catches the commit feed up by reading the log by seq.
///
/// A notification is a wake-up, not the content: it may be lost (while this connection is being
/// opened again, when PostgreSQL restarts, or when an instance dies between its COMMIT and its
/// NOTIFY), so the watcher also reads apps' heads each `pollInterval` and reports those, and the
/// feed catches up with whatever it finds past what it delivered. A lost notification delays an
/// event by a poll period at most (two, for a subscription that starts while a poll is under
/// way: the poll may have listed the followed apps before it); none is lost.
///
/// The poll reads every app's head when the connection opens (what came before is not
/// notified) and at every `everyAppEvery`th poll, and otherwise only the followed apps'
/// (`CommitHandler.followedApps`): the others' actions are not delivered here, so a missed head
/// of theirs costs nothing but a longer read of the log if one is followed later, and with
/// 30 000 apps reading them all four times a second cost an idle instance 7 % of a core and
/// PostgreSQL 3 %. When PostgreSQL cannot be reached the thread tries again with a growing pause
/// (up to two seconds); nothing else waits for it.
final class CommitWatcher: Sendable {
    /// Set by `close`; the thread looks at it whenever it wakes.
    final class Stop: Sendable {
        let requested = Atomic<Bool>(false)
    }

    private let thread = Mutex<WorkerThread?>(nil)
    private let stop = Stop()
    /// A pipe whose reading end the thread polls beside the socket, so `close` wakes it at once.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// - Parameters:
    ///   - listens: `LISTEN` for notifications (false: follow by the poll alone).
    ///   - pollIntervalMs: how often apps' heads are read, whatever the notifications.
    ///   - availability: told of each connection attempt's outcome.
    ///   - followedApps: the apps whose heads the poll reads; nil for every app's. Without
    ///     `listens`, the poll reads every app's.
    ///   - everyAppEvery: one poll in this many reads every app's head (see `WatchLoop`).
    ///   - report: called with apps' committed heads (`retry` after a poll: apps whose
    ///     catch-up failed are tried again).
    init(
        options: PGConnection.Options, notifier: CommitNotifier, listens: Bool, pollIntervalMs: Int,
        statistics: PostgresStatisticsRecorder, availability: StoreAvailability? = nil,
        followedApps: @escaping @Sendable () -> Set<String>?, everyAppEvery: Int = WatchLoop.everyAppEvery,
        report: @escaping @Sendable (_ heads: [String: UInt64], _ retry: Bool) -> Void
    ) {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let loop = WatchLoop(
            options: options, notifier: notifier, listens: listens, pollIntervalMs: max(10, pollIntervalMs),
            statistics: statistics, followedApps: followedApps, everyAppEvery: max(1, everyAppEvery),
            wakeFD: fds[0], stop: stop, availability: availability, report: report)
        let worker = WorkerThread(name: "mod-pg-watch") { loop.run() }
        thread.withLock { $0 = worker }
    }

    /// Stops the thread, which closes its connection.
    func close() {
        guard !stop.requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        thread.joinAndForget()
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    deinit {
        close()
    }
}

/// The watcher's thread: connect, `LISTEN`, read the heads, then wait for notifications, reading
/// the heads again each poll interval; connect again after a pause when the connection is lost.
struct WatchLoop: Sendable {
    let options: PGConnection.Options
    let notifier: CommitNotifier
    let listens: Bool
    let pollIntervalMs: Int
    let statistics: PostgresStatisticsRecorder
    let followedApps: @Sendable () -> Set<String>?
    let everyAppEvery: Int
    let wakeFD: Int32
    let stop: CommitWatcher.Stop
    let availability: StoreAvailability?
    let report: @Sendable ([String: UInt64], Bool) -> Void

    /// The longest pause between two attempts to connect, in milliseconds.
    static let maxPauseMs = 2_000
    /// One poll in this many reads every app's head, not only the followed apps': should
    /// notifications stop without the connection dropping (a pooler that loses `LISTEN`), the
    /// feed still passes the other apps' actions within 40 polls (10 s at the default period),
    /// and a subscription starting on one of them later has little of its log to read.
    static let everyAppEvery = 40

    func run() {
        var pauseMs = 50
        var connectedBefore = false
        while !stop.requested.load(ordering: .acquiring) {
            do throws(ModerationError) {
                let connection = try connect()
                if listens { try connection.exec("LISTEN \(PGConnection.quoteIdentifier(notifier.channel))") }
                if connectedBefore { statistics.record { $0.watcherReconnects += 1 } }
                connectedBefore = true
                pauseMs = 50
                try watch(connection)
            } catch {
                // Unreachable or lost: try again after a pause, which grows while it lasts.
                _ = wait(on: nil, timeoutMs: pauseMs)
                pauseMs = min(Self.maxPauseMs, pauseMs * 2)
            }
        }
    }

    /// A connection, its outcome told to `availability`: while PostgreSQL is away this loop's
    /// attempts are what notices it coming back, with or without calls.
    private func connect() throws(ModerationError) -> PGConnection {
        do throws(ModerationError) {
            let connection = try PGConnection(options, pipeline: false)
            availability?.connected()
            return connection
        } catch {
            if error.code == .storeUnavailable { availability?.failed(error) }
            throw error
        }
    }

    /// Serves one connection until it is lost (throws) or the watcher stops (returns).
    private func watch(_ connection: PGConnection) throws(ModerationError) {
        // The first poll comes after LISTEN: whatever was committed before is in the heads read,
        // whatever after is notified.
        try readHeads(connection, of: nil)
        var nextPoll = monotonicSeconds() + Double(pollIntervalMs) / 1_000
        var polls = 0
        while !stop.requested.load(ordering: .acquiring) {
            let remainingMs = max(0, Int((nextPoll - monotonicSeconds()) * 1_000))
            if remainingMs == 0 || !wait(on: connection.socket, timeoutMs: remainingMs) {
                if stop.requested.load(ordering: .acquiring) { return }
                polls += 1
                let everyApp = !listens || polls % everyAppEvery == 0
                try readHeads(connection, of: everyApp ? nil : followedApps())
                nextPoll = monotonicSeconds() + Double(pollIntervalMs) / 1_000
            }
            // Also after a poll: libpq keeps notifications that arrived during a query.
            try deliverNotifications(connection)
        }
    }

    /// Reports the heads of the notifications received (others' commits).
    private func deliverNotifications(_ connection: PGConnection) throws(ModerationError) {
        var heads: [String: UInt64] = [:]
        let received = try connection.notifications()
        for (channel, payload) in received where channel == notifier.channel {
            guard let (app, head) = notifier.parse(payload) else { continue }
            heads[app] = max(heads[app] ?? 0, head)
        }
        if !received.isEmpty { statistics.record { $0.notifications += UInt64(received.count) } }
        report(heads, false)
    }

    /// Reads the heads of `apps` (nil: of every app) and reports them.
    private func readHeads(_ connection: PGConnection, of apps: Set<String>?) throws(ModerationError) {
        var heads: [String: UInt64] = [:]
        let rows: PGResult?
        if let apps {
            rows =
                apps.isEmpty
                ? nil
                : try connection.exec(
                    "SELECT name, head_seq FROM apps WHERE name = ANY ($1::text[]) AND head_seq > 0",
                    textParameters: [Self.arrayLiteral(apps)])
        } else {
            rows = try connection.exec("SELECT name, head_seq FROM apps WHERE head_seq > 0")
        }
        if let rows {
            for row in 0..<rows.rowCount { heads[rows.string(row, 0)] = rows.uint64(row, 1) }
        }
        statistics.record { $0.headsPolled += UInt64(heads.count) }
        report(heads, true)
    }

    /// `values` as a PostgreSQL array literal of text (each element quoted).
    static func arrayLiteral(_ values: Set<String>) -> String {
        let elements = values.map { value in
            "\"" + value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }
        return "{" + elements.joined(separator: ",") + "}"
    }

    /// Waits until `socket` has input (true) or `timeoutMs` passed or the watcher is stopped
    /// (false).
    private func wait(on socket: Int32?, timeoutMs: Int) -> Bool {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        if let socket { fds.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&fds, nfds_t(fds.count), Int32(clamping: timeoutMs))
        guard ready > 0 else { return false }
        return fds.count > 1 && fds[1].revents != 0
    }
}
