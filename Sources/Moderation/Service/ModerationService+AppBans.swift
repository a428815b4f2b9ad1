extension ModerationService {
    /// Bans a user from the whole app (`BanUserFromApp`): the app only.
    ///
    /// A ban (`shadow == false`): every call on the user's behalf fails with
    /// `ERR_USER_BANNED_FROM_APP` but DeleteUser of themselves, their open subscriptions end with
    /// it, and CheckPost refuses them in every group. A shadow ban: their calls keep working, and
    /// CheckPost allows their posts marked `shadowed`. Memberships, group bans and mutes stay as
    /// they are, so lifting the ban restores everything.
    ///
    /// Order: arguments (reason ≤ 512, duration 0 up to 100 years) → the acting user not banned
    /// from the app → the app only (`ERR_PERMISSION_DENIED`) → target exists (`ERR_UID_NOT_FOUND`)
    /// → not banned from the app (`ERR_ALREADY_BANNED`). `durationMs` 0 is until unbanned.
    public func banUserFromApp(
        _ caller: Caller, uid: String, reason: String = "", durationMs: Int64 = 0, shadow: Bool = false,
        replay: @escaping ReplayEncoder<AppBanResult>,
        completion: @escaping @Sendable (MutationResult<AppBanResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<AppBanResult> in
            let uid = try Validation.identifier(uid, field: "uid")
            try Validation.sanction(reason: reason, durationMs: durationMs, meaningOfZero: "until unbanned")
            return { (context: inout WriteContext) throws(ModerationError) -> AppBanResult in
                try context.banFromApp(uid: uid, reason: reason, durationMs: durationMs, shadow: shadow)
            }
        }
    }

    /// Lifts a user's ban from the app (`UnbanUserFromApp`): the app only.
    ///
    /// Order: arguments → the acting user not banned from the app → the app only
    /// (`ERR_PERMISSION_DENIED`) → target exists (`ERR_UID_NOT_FOUND`) → banned from the app now
    /// (`ERR_USER_NOT_BANNED`).
    public func unbanUserFromApp(
        _ caller: Caller, uid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<ActionRecord> in
            let uid = try Validation.identifier(uid, field: "uid")
            return { (context: inout WriteContext) throws(ModerationError) -> ActionRecord in
                try context.unbanFromApp(uid: uid)
            }
        }
    }

    /// Lists the app's bans in force (`ListAppBans`), sorted by (bannedAt descending, uid), keyset
    /// paged and searchable by uid or name as ListBannedMembers is: the app only.
    ///
    /// Order: arguments → the acting user not banned from the app → the app only
    /// (`ERR_PERMISSION_DENIED`). A ban past its expiry is never listed, whether or not the
    /// sweeper has recorded it.
    public func listAppBans(_ caller: Caller, options: ListBannedOptions = ListBannedOptions())
        throws(ModerationError) -> Page<AppBan>
    {
        let limit = try Validation.limit(options.limit)
        let after = try Cursor.appBanKey(options.cursor)
        let search = try Validation.search(options.search)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<AppBan> in
            try context.caller.requireApp(toDo: "list the app's bans")
            guard let appID = try context.appID() else { return .empty }
            let query = BanPageQuery(after: after, search: search, limit: limit + 1, activeAt: context.now)
            let rows = try context.snapshot.appBans(appID: appID, query: query)
            return Page(rows: rows, limit: limit) { Cursor.encode(appBans: BanKey(bannedAt: $0.bannedAt, uid: $0.uid)) }
        }
    }
}
