internal import Moderation

extension PostgresSession {
    /// The app's key; on a writer, also the app's lock (see `PostgresSession`).
    func appID(named app: String) throws(ModerationError) -> Int64? {
        guard isWriter else {
            if let known = readerAppIDs[app] { return known }
            let found = try connection.query(.appByName, [.text(app)])
            guard found.rowCount > 0 else { return nil }
            let id = found.int64(0, 0)
            readerAppIDs[app] = id
            return id
        }
        if let id = writer.appIDs[app] {
            try lockApp(id: id)
            return id
        }
        let waiting = !holdsLocks
        let locked = try connection.query(waiting ? .lockApp : .lockAppSkipping, [.text(app)])
        if locked.rowCount > 0 {
            let id = locked.int64(0, 0)
            writer.appIDs[app] = id
            hold(appID: id, head: locked.uint64(0, 1), appBansVersion: locked.uint64(0, 2))
            return id
        }
        if waiting { return nil }
        // Skipped: another writer holds it — or there is no such app.
        guard try connection.query(.appByName, [.text(app)]).rowCount > 0 else { return nil }
        throw deferral(app)
    }

    func createApp(named app: String) throws(ModerationError) -> Int64 {
        if let existing = try appID(named: app) { return existing }
        let inserted = try connection.query(.insertApp, [.text(app)])
        if inserted.rowCount > 0 {
            let id = inserted.int64(0, 0)
            writer.appIDs[app] = id
            hold(appID: id, head: 0, appBansVersion: 0)
            return id
        }
        // Another transaction created it and has committed since.
        guard let id = try appID(named: app) else { throw .storage("app \(app) could not be created") }
        return id
    }

    /// Takes the lock of the app with key `appID` unless the transaction holds it already.
    func lockApp(id appID: Int64) throws(ModerationError) {
        guard isWriter, writer.heads[appID] == nil else { return }
        let waiting = !holdsLocks
        let locked = try connection.query(waiting ? .lockAppByID : .lockAppByIDSkipping, [.int(appID)])
        guard locked.rowCount > 0 else {
            if waiting { throw .storage("app \(appID) vanished") }
            throw deferral("\(appID)")
        }
        writer.appIDs[locked.string(0, 0)] = appID
        hold(appID: appID, head: locked.uint64(0, 1), appBansVersion: locked.uint64(0, 2))
    }

    /// Records that the transaction holds the app's lock, with the head seq and the version of
    /// its bans from the app read under it.
    func hold(appID: Int64, head: UInt64, appBansVersion: UInt64) {
        writer.heads[appID] = head
        writer.appBansVersions[appID] = appBansVersion
        locksHeld = true
    }

    func logBounds(appID: Int64) throws(ModerationError) -> LogBounds {
        let row = try connection.query(.appLog, [.int(appID)])
        guard row.rowCount > 0 else { return LogBounds(headSeq: 0, prunedThrough: 0) }
        let stored = LogBounds(headSeq: row.uint64(0, 1), prunedThrough: row.uint64(0, 2))
        guard isWriter, let head = writer.heads[appID] else { return stored }
        return LogBounds(headSeq: head, prunedThrough: stored.prunedThrough)
    }

    /// The refusal of a write whose app another writer holds.
    private func deferral(_ app: String) -> ModerationError {
        isDeferred = true
        return .storage("app \(app) is being written by another writer; the write runs again in the next batch")
    }
}
