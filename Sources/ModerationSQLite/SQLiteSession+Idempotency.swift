internal import Moderation

extension SQLiteSession {
    func idempotentReply(appID: Int64, actor: String, key: String, notBefore: Int64) throws(ModerationError) -> [UInt8]?
    {
        try connection.row(.idempotentReply, appID, actor, key, notBefore) { $0.blob(0) }
    }

    func saveIdempotentReply(appID: Int64, actor: String, key: String, reply: [UInt8], at time: Int64)
        throws(ModerationError)
    {
        try connection.execute(.saveReply, appID, actor, key, time, reply)
    }

    func purgeIdempotentReplies(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int {
        try connection.execute(.purgeReplies, cutoff, limit)
        return connection.changes
    }
}

extension SQLiteSession: StoreTransaction {}
