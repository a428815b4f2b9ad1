extension ModerationService {
    /// Reads a group's action log, oldest first (`ListGroupActions`, the seeds' "missed events").
    ///
    /// Members (and the app) see every action of the group but the private report actions, which
    /// only admins, moderators, the app and the reporter see; anyone else sees only the actions
    /// whose target they were (a reported member never sees the report), and a private group in which they were never a target does not
    /// exist for them. `afterSeq` (or a cursor) older than the log's retention is
    /// `ERR_CURSOR_EXPIRED`; 0 starts at the oldest retained action. With filters (kinds, actor,
    /// target — a non-member's view is a target filter) one call looks through at most 10 000
    /// seqs, so a page may be short, or empty, and still carry a cursor.
    public func listGroupActions(_ caller: Caller, guid: String, options: ListActionsOptions = ListActionsOptions())
        throws(ModerationError) -> ActionPage
    {
        let guid = try Validation.identifier(guid, field: "guid")
        let limit = try Validation.limit(options.limit)
        let start = try Cursor.afterSeq(options.cursor) ?? options.afterSeq
        let actorFilter: String?
        if options.actor.isEmpty {
            actorFilter = nil
        } else if options.actor == User.appUID {
            actorFilter = User.appUID
        } else {
            actorFilter = try Validation.identifier(options.actor, field: "actor")
        }
        var targetFilter = try options.target.isEmpty ? nil : Validation.identifier(options.target, field: "target")
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> ActionPage in
            let access = try context.access(guid)
            if access.actorRank == .nonMember, let actor = context.caller.actor {
                if access.stored.group.type == .private,
                    try !context.snapshot.hasActions(groupID: access.groupID, on: actor)
                {
                    throw .groupNotFound(guid)
                }
                if let target = targetFilter, target != actor {
                    return ActionPage(actions: [], nextCursor: "", lastSeq: start)
                }
                targetFilter = actor
            }
            guard let appID = try context.appID() else { throw .groupNotFound(guid) }
            let bounds = try context.snapshot.logBounds(appID: appID)
            if start > 0 && start < bounds.prunedThrough {
                throw ModerationError(
                    .cursorExpired,
                    "actions after seq \(start) of group \(guid) are past retention; the oldest kept is \(bounds.oldestRetainedSeq)"
                )
            }
            // A filtered read scans at most a window of seqs, so rare matches cannot make one call
            // walk the whole log; a short page then carries a cursor to the end of the window.
            let filtered = !options.kinds.isEmpty || actorFilter != nil || targetFilter != nil
            let window: UInt64? = filtered ? start + Self.filteredScanWindow : nil
            let query = ActionLogQuery(
                afterSeq: start, limit: limit + 1, groupID: access.groupID, kinds: options.kinds, actor: actorFilter,
                target: targetFilter, throughSeq: window)
            let rows = try context.snapshot.actions(appID: appID, query: query)
            let page = Array(rows.prefix(limit))
            // Reports are private: their actions are left out for readers below moderator but
            // their reporter (the page may then be short; the cursor still follows the log).
            let moderates = access.actorRank.isModeratorOrAbove
            let shown = page.filter { $0.isVisible(to: context.caller.actor, moderates: moderates) }
            if rows.count > limit, let last = page.last?.seq {
                return ActionPage(actions: shown, nextCursor: Cursor.encode(afterSeq: last), lastSeq: last)
            }
            if let window, window < bounds.headSeq {
                return ActionPage(actions: shown, nextCursor: Cursor.encode(afterSeq: window), lastSeq: window)
            }
            return ActionPage(actions: shown, nextCursor: "", lastSeq: page.last?.seq ?? start)
        }
    }

    /// How many seqs one filtered `listGroupActions` call looks through at most.
    static let filteredScanWindow: UInt64 = 10_000

    /// Runs `body` with a consistent snapshot of an app's action log and memberships: what the
    /// event stream needs to replay from a seq and then continue live without a gap.
    public func withActionLog<T>(app: String, _ body: (ActionLogSnapshot) throws(ModerationError) -> T)
        throws(ModerationError) -> T
    {
        let now = clock()
        return try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> T in
            try body(ActionLogSnapshot(snapshot: snapshot, appID: snapshot.appID(named: app), now: now))
        }
    }
}
