extension ModerationService {
    /// A moderation call on one member of a group (kick, ban, unban, mute, unmute): the arguments
    /// (and the change's own) are step 1; in the write, the actor's access as an admin or
    /// moderator (`WriteContext.moderatorAccess`), then the change on the uid, then the group's
    /// counters saved.
    func submitChange<Value: Sendable>(
        _ caller: Caller, guid: String, uid: String, _ change: TargetChange<Value>,
        replay: @escaping ReplayEncoder<Value>, completion: @escaping @Sendable (MutationResult<Value>) -> Void
    ) {
        let (toDo, apply) = (change.toDo, change.apply)
        submitOnUser(
            caller, guid: guid, uid: uid, touching: true, replay: replay, completion: completion,
            validate: change.validate
        ) { (context: inout WriteContext, guid: String, uid: String) throws(ModerationError) -> Value in
            var access = try context.moderatorAccess(guid, toDo: toDo)
            let value = try apply(&context, &access, uid)
            try context.saveCounters(&access)
            return value
        }
    }

    /// A call on one user of a group: `guid` and `uid` (and `validate`'s own arguments) are step
    /// 1, then `change` runs in the write with them checked. With `touching`, the store is told
    /// the group and user the write works on (`submit`'s `touching`).
    func submitOnUser<Value: Sendable>(
        _ caller: Caller, guid: String, uid: String, touching: Bool = false, replay: @escaping ReplayEncoder<Value>,
        completion: @escaping @Sendable (MutationResult<Value>) -> Void,
        validate: () throws(ModerationError) -> Void = {},
        change: @escaping @Sendable (inout WriteContext, _ guid: String, _ uid: String) throws(ModerationError) -> Value
    ) {
        submit(caller, touching: touching ? (guid, [uid]) : nil, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<Value> in
            let guid = try Validation.identifier(guid, field: "guid")
            let uid = try Validation.identifier(uid, field: "uid")
            try validate()
            return { (context: inout WriteContext) throws(ModerationError) -> Value in
                try change(&context, guid, uid)
            }
        }
    }

    /// A call of the acting user on a group (accept or decline an invite, ask to join or cancel
    /// the request): the acting user (the app cannot make it), `guid` and `validate`'s own
    /// arguments are step 1, then `change` runs in the write with the group and the user.
    func submitAsUser<Value: Sendable>(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<Value>,
        completion: @escaping @Sendable (MutationResult<Value>) -> Void,
        validate: () throws(ModerationError) -> Void = {},
        change:
            @escaping @Sendable (inout WriteContext, _ guid: String, _ actor: String) throws(ModerationError) -> Value
    ) {
        submit(caller, replay: replay, completion: completion) { () throws(ModerationError) -> WriteBody<Value> in
            let actor = try ValidatedCaller(caller).requireUser()
            let guid = try Validation.identifier(guid, field: "guid")
            try validate()
            return { (context: inout WriteContext) throws(ModerationError) -> Value in
                try change(&context, guid, actor)
            }
        }
    }

    /// A bulk moderation call over up to 100 uids of one group: the arguments (and the change's
    /// own) are step 1, steps 2–4 fail the whole call, and the change gives a result per uid for
    /// steps 5–9 (`WriteContext.forEachTarget`).
    func submitBulk<Value: BulkOutcome>(
        _ caller: Caller, guid: String, uids: [String], _ change: TargetChange<Value>,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        let (toDo, apply) = (change.toDo, change.apply)
        submit(caller, touching: (guid, uids), replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<[String: UserResult]> in
            let guid = try Validation.identifier(guid, field: "guid")
            let uids = try Validation.identifiers(uids, field: "uids")
            try change.validate()
            return { (context: inout WriteContext) throws(ModerationError) -> [String: UserResult] in
                try context.forEachTarget(uids, in: guid, toDo: toDo) {
                    (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError)
                        -> UserResult in
                    try apply(&context, &access, uid).userResult
                }
            }
        }
    }
}
