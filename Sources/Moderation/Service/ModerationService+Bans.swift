extension ModerationService {
    /// Lists the bans in force in a group (`ListBannedMembers`), sorted by (bannedAt descending,
    /// uid): admins, moderators and the app.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator. A ban past its
    /// expiry is never listed, whether or not the sweeper has recorded it.
    public func listBannedMembers(_ caller: Caller, guid: String, options: ListBannedOptions = ListBannedOptions())
        throws(ModerationError) -> Page<Ban>
    {
        let guid = try Validation.identifier(guid, field: "guid")
        let limit = try Validation.limit(options.limit)
        let after = try Cursor.banKey(options.cursor)
        let search = try Validation.search(options.search)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<Ban> in
            let access = try context.moderatorAccess(guid, toDo: "list the banned members")
            let query = BanPageQuery(after: after, search: search, limit: limit + 1, activeAt: context.now)
            let rows = try context.snapshot.bans(groupID: access.groupID, query: query)
            return Page(rows: rows, limit: limit) { Cursor.encode(BanKey(bannedAt: $0.bannedAt, uid: $0.uid)) }
        }
    }
}
