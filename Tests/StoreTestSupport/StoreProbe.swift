public import Moderation
public import ThreadSupport

/// Helpers reading a store directly.
public enum StoreProbe {
    public static func user(_ store: some ModerationStore, app: String, uid: String) throws -> StoredUser? {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> StoredUser? in
            guard let appID = try snapshot.appID(named: app) else { return nil }
            return try snapshot.user(appID: appID, uid: uid)
        }
    }

    /// User `uid` of app "app" read twice in one read closure, with a commit in between: the
    /// read signals `release` (which lets `holder`, a write waiting on it, finish) and waits for
    /// `holder` before its second lookup. Both lookups come from the read's one snapshot.
    public static func userAroundCommit(
        _ store: some ModerationStore, uid: String, release: BlockingSemaphore, holder: ClosureWrite
    ) throws -> (before: StoredUser?, after: StoredUser?) {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> (StoredUser?, StoredUser?) in
            let appID = try snapshot.appID(named: "app")!
            let before = try snapshot.user(appID: appID, uid: uid)
            release.signal()
            _ = holder.wait()
            return (before, try snapshot.user(appID: appID, uid: uid))
        }
    }

    public static func log(_ store: some ModerationStore, app: String) throws -> [ActionRecord] {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> [ActionRecord] in
            guard let appID = try snapshot.appID(named: app) else { return [] }
            return try snapshot.actions(appID: appID, query: ActionLogQuery(afterSeq: 0, limit: 10_000))
        }
    }

    public static func bounds(_ store: some ModerationStore, app: String) throws -> LogBounds {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> LogBounds in
            guard let appID = try snapshot.appID(named: app) else { return LogBounds(headSeq: 0, prunedThrough: 0) }
            return try snapshot.logBounds(appID: appID)
        }
    }
}
