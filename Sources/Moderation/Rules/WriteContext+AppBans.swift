/// The writer's part of the bans from the whole app: BanUserFromApp, UnbanUserFromApp, their
/// expiry, and the ban a deleted user takes with them. Their actions belong to no group
/// (`StoredGroup.appWide`).
extension WriteContext {
    /// Step 4 of the app's own calls: only the app, never a user (`ERR_PERMISSION_DENIED`).
    func requireApp(toDo what: String) throws(ModerationError) {
        try caller.requireApp(toDo: what)
    }

    /// The ban of `uid` from the app as the rules see it now. A ban past its expiry that the
    /// sweeper has not recorded yet does not apply; a change converts it (`expireAppBan`) just
    /// before its own writes.
    mutating func appBanState(of uid: String) throws(ModerationError) -> AppBanState {
        guard let appID = try appID(), let ban = try tx.appBan(appID: appID, uid: uid) else { return .none }
        return ban.isActive(at: now) ? .active(ban) : .expired(ban)
    }

    /// Bans `uid` from the app (`BanUserFromApp`): the app only (step 4), the user exists (step 5,
    /// `ERR_UID_NOT_FOUND`, also for a deleted user), not banned from the app already (step 8,
    /// `ERR_ALREADY_BANNED`; a ban past its expiry is converted first). Nothing else of the user
    /// changes: memberships, group bans and mutes stay as they are.
    mutating func banFromApp(uid: String, reason: String, durationMs: Int64, shadow: Bool) throws(ModerationError)
        -> AppBanResult
    {
        try requireApp(toDo: "ban users from the app")
        let target = try requireUser(uid)
        let state = try appBanState(of: uid)
        switch state {
        case .active:
            throw .alreadyBannedFromApp(uid)
        case .expired(let ban):
            try expireAppBan(ban)
        case .none:
            break
        }
        let ban = AppBan(
            uid: uid, name: target.user.name, avatar: target.user.avatar, bannedAt: now, bannedBy: caller.actionUID,
            reason: reason, expiresAt: durationMs > 0 ? now + durationMs : 0, shadow: shadow)
        try tx.insertAppBan(appID: ensureAppID(), user: target, ban: ban)
        let action = try record(
            .appBanned, on: target.user, group: .appWide, reason: reason, expiresAt: ban.expiresAt, shadow: shadow)
        return AppBanResult(action: action, ban: ban)
    }

    /// Lifts the ban of `uid` from the app (`UnbanUserFromApp`): the app only (step 4), the user
    /// exists (step 5), banned from the app now (step 8, `ERR_USER_NOT_BANNED`: a ban past its
    /// expiry counts as none, and is left for the sweeper, as a failing write leaves any).
    mutating func unbanFromApp(uid: String) throws(ModerationError) -> ActionRecord {
        try requireApp(toDo: "unban users from the app")
        let target = try requireUser(uid)
        guard case .active(let ban) = try appBanState(of: uid), let appID = try appID() else {
            throw .notBannedFromApp(uid)
        }
        try tx.deleteAppBan(appID: appID, uid: uid)
        return try record(.appUnbanned, on: target.user, group: .appWide, shadow: ban.shadow)
    }

    /// Deletes an app ban past its expiry and records `appUnbanned` (reason "expired", by the
    /// app), before whatever the change records.
    @discardableResult
    mutating func expireAppBan(_ ban: AppBan) throws(ModerationError) -> ActionRecord {
        guard let appID = try appID() else { throw .storage("the app of \(ban.uid)'s ban from it is missing") }
        try tx.deleteAppBan(appID: appID, uid: ban.uid)
        var target = User(uid: ban.uid)
        if let stored = try tx.user(appID: appID, uid: ban.uid) { target = stored.user }
        return try record(
            .appUnbanned, on: target, group: .appWide, by: .app, reason: "expired", shadow: ban.shadow)
    }

    /// The ban from the app a deleted user takes with them: one in force is dropped with an
    /// `appUnbanned` action (reason "userDeleted", by the caller), one past its expiry is
    /// converted as any change converts it. Returns the action, or nil when there was no ban.
    mutating func dropAppBan(of user: User) throws(ModerationError) -> ActionRecord? {
        switch try appBanState(of: user.uid) {
        case .none:
            return nil
        case .expired(let ban):
            return try expireAppBan(ban)
        case .active(let ban):
            guard let appID = try appID() else { return nil }
            try tx.deleteAppBan(appID: appID, uid: user.uid)
            return try record(
                .appUnbanned, on: user, group: .appWide, reason: Self.deletionReason, shadow: ban.shadow)
        }
    }
}
