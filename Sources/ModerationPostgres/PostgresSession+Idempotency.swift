internal import Moderation

extension PostgresSession {
    /// Under the app's lock on a writer, so a retry that reaches another instance while the first
    /// call commits waits for it and replays its reply.
    func idempotentReply(appID: Int64, actor: String, key: String, notBefore: Int64) throws(ModerationError) -> [UInt8]?
    {
        if let known = prefetchedReplies[StoredReplyKey(appID: appID, replay: ReplayKey(actor: actor, key: key))] {
            guard let known, known.createdAt >= notBefore else { return nil }
            return known.bytes
        }
        let row = try connection.query(.idempotentReply, [.int(appID), .text(actor), .text(key), .int(notBefore)])
        return row.rowCount > 0 ? row.bytes(0, 0) : nil
    }

    func saveIdempotentReply(appID: Int64, actor: String, key: String, reply: [UInt8], at time: Int64)
        throws(ModerationError)
    {
        try connection.send(.saveReply, [.int(appID), .text(actor), .text(key), .int(time), .bytes(reply)])
        // A later write of the batch with this key asks PostgreSQL, which has this reply by then.
        prefetchedReplies[StoredReplyKey(appID: appID, replay: ReplayKey(actor: actor, key: key))] = nil
    }

    func purgeIdempotentReplies(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int {
        Int(try connection.query(.purgeReplies, [.int(cutoff), .int(limit)]).changedRows)
    }
}

extension PostgresSession: StoreTransaction {}
