internal import CSQLite
internal import Moderation

extension SQLiteSession {
    func idempotentReply(appID: Int64, actor: String, key: String, notBefore: Int64) throws(ModerationError) -> [UInt8]?
    {
        try connection.run(.idempotentReply) { (statement) throws(ModerationError) -> [UInt8]? in
            statement.bind(1, appID)
            statement.bind(2, actor)
            statement.bind(3, key)
            statement.bind(4, notBefore)
            return try statement.step() ? statement.blob(0) : nil
        }
    }

    func saveIdempotentReply(appID: Int64, actor: String, key: String, reply: [UInt8], at time: Int64)
        throws(ModerationError)
    {
        try connection.run(.saveReply) { (statement) throws(ModerationError) in
            statement.bind(1, appID)
            statement.bind(2, actor)
            statement.bind(3, key)
            statement.bind(4, time)
            statement.bind(5, blob: reply)
            try statement.execute()
        }
    }

    func purgeIdempotentReplies(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int {
        return try connection.run(.purgeReplies) { (statement) throws(ModerationError) -> Int in
            statement.bind(1, cutoff)
            statement.bind(2, limit)
            try statement.execute()
            return Int(sqlite3_changes(connection.handle))
        }
    }
}

extension SQLiteSession: StoreTransaction {}
