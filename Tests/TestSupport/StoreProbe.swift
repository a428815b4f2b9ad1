public import Moderation

/// Helpers reading a store directly.
public enum StoreProbe {
    public static func user(_ store: some ModerationStore, app: String, uid: String) throws -> StoredUser? {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> StoredUser? in
            guard let appID = try snapshot.appID(named: app) else { return nil }
            return try snapshot.user(appID: appID, uid: uid)
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
