extension ModerationService {
    /// Creates a user of the caller's app (`CreateUser`); any caller may.
    ///
    /// Errors: `ERR_INVALID_ARGUMENT`, `ERR_UID_ALREADY_EXISTS` (also for the uid of a deleted
    /// user: uids are never used again).
    public func createUser(
        _ caller: Caller, _ user: NewUser, replay: @escaping ReplayEncoder<User>,
        completion: @escaping @Sendable (MutationResult<User>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) { () throws(ModerationError) -> WriteBody<User> in
            let uid = try Validation.identifier(user.uid, field: "uid")
            try Validation.text(user.name, field: "name", max: Validation.maxName)
            try Validation.text(user.avatar, field: "avatar", max: Validation.maxURL)
            try Validation.metadata(user.metadata)
            return { (context: inout WriteContext) throws(ModerationError) -> User in
                let appID = try context.ensureAppID()
                guard try context.tx.user(appID: appID, uid: uid) == nil else {
                    throw ModerationError(.uidAlreadyExists, "user \(uid) already exists")
                }
                guard try !context.tx.uidRetired(appID: appID, uid: uid) else {
                    throw ModerationError(
                        .uidAlreadyExists, "user \(uid) was deleted; a deleted user's uid is never used again")
                }
                let created = User(
                    uid: uid, name: user.name, avatar: user.avatar, metadata: user.metadata, createdAt: context.now)
                return try context.tx.insertUser(appID: appID, created).user
            }
        }
    }

    /// Changes a user's profile (`UpdateUser`): the user itself or the app.
    ///
    /// Order: arguments → permission (`ERR_PERMISSION_DENIED`) → user exists (`ERR_UID_NOT_FOUND`).
    public func updateUser(
        _ caller: Caller, _ update: UserUpdate, replay: @escaping ReplayEncoder<User>,
        completion: @escaping @Sendable (MutationResult<User>) -> Void
    ) {
        // Cached member pages show profiles: once the change is committed, and before its
        // caller hears of it, none of them may be served any more.
        let memberPages = memberPages
        let notify: @Sendable (MutationResult<User>) -> Void = { result in
            if case .done(.success, _) = result { memberPages.profilesChanged() }
            completion(result)
        }
        submit(caller, replay: replay, completion: notify) { () throws(ModerationError) -> WriteBody<User> in
            let uid = try Validation.identifier(update.uid, field: "uid")
            if let name = update.name { try Validation.text(name, field: "name", max: Validation.maxName) }
            if let avatar = update.avatar { try Validation.text(avatar, field: "avatar", max: Validation.maxURL) }
            if let metadata = update.metadata { try Validation.metadata(metadata) }
            return { (context: inout WriteContext) throws(ModerationError) -> User in
                if let actor = context.caller.actor, actor != uid {
                    throw ModerationError(.permissionDenied, "\(actor) may not update user \(uid)")
                }
                var stored = try context.requireUser(uid)
                if let name = update.name { stored.user.name = name }
                if let avatar = update.avatar { stored.user.avatar = avatar }
                if let metadata = update.metadata { stored.user.metadata = metadata }
                try context.tx.updateUser(stored)
                return stored.user
            }
        }
    }

    /// Deletes a user (`DeleteUser`): the user itself or the app. See `WriteContext.deleteUser`.
    ///
    /// Order: arguments → the acting user not banned from the app, unless they delete themselves
    /// (`ERR_USER_BANNED_FROM_APP`) → permission (`ERR_PERMISSION_DENIED`) → user exists
    /// (`ERR_UID_NOT_FOUND`, also for one deleted before) → owns no group
    /// (`ERR_USER_OWNS_GROUPS`). Afterwards the uid behaves everywhere as one that never existed
    /// (GetUser, UpdateUser, a target: `ERR_UID_NOT_FOUND`; an actor: a non-member), except that
    /// CreateUser refuses it.
    public func deleteUser(
        _ caller: Caller, uid: String, replay: @escaping ReplayEncoder<DeleteUserResult>,
        completion: @escaping @Sendable (MutationResult<DeleteUserResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion, checksAppBan: false) {
            () throws(ModerationError) -> WriteBody<DeleteUserResult> in
            let uid = try Validation.identifier(uid, field: "uid")
            return { (context: inout WriteContext) throws(ModerationError) -> DeleteUserResult in
                try context.deleteUser(uid)
            }
        }
    }

    /// Reads a user of the caller's app (`GetUser`).
    public func getUser(_ caller: Caller, uid: String) throws(ModerationError) -> User {
        let uid = try Validation.identifier(uid, field: "uid")
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> User in
            guard let appID = try context.appID(), let user = try context.snapshot.user(appID: appID, uid: uid) else {
                throw .uidNotFound(uid)
            }
            return user.user
        }
    }
}
