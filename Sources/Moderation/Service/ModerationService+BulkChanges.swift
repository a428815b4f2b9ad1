extension ModerationService {
    /// A moderation call on one member of a group (kick, ban, unban, mute, unmute): the arguments
    /// (and `validate`'s own) are step 1; in the write, the actor's access as an admin or moderator
    /// (`WriteContext.moderatorAccess`), then `change` on the uid, then the group's counters saved.
    /// - Parameter toDo: the action as messages name it ("ban members").
    func submitChange<Value: Sendable>(
        _ caller: Caller, guid: String, uid: String, toDo: String, replay: @escaping ReplayEncoder<Value>,
        completion: @escaping @Sendable (MutationResult<Value>) -> Void,
        validate: () throws(ModerationError) -> Void = {},
        change: @escaping @Sendable (inout WriteContext, inout GroupAccess, String) throws(ModerationError) -> Value
    ) {
        submit(caller, touching: (guid, [uid]), replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<Value> in
            let guid = try Validation.identifier(guid, field: "guid")
            let uid = try Validation.identifier(uid, field: "uid")
            try validate()
            return { (context: inout WriteContext) throws(ModerationError) -> Value in
                var access = try context.moderatorAccess(guid, toDo: toDo)
                let value = try change(&context, &access, uid)
                try context.saveCounters(&access)
                return value
            }
        }
    }

    /// What a bulk call (kick, ban, unban, mute, unmute many) does to one of its uids, in the
    /// write, after the call's own checks passed: that uid's result.
    typealias BulkStep = @Sendable (inout WriteContext, inout GroupAccess, String) throws(ModerationError) -> UserResult

    /// A bulk moderation call over up to 100 uids of one group: the arguments (and `validate`'s
    /// own) are step 1, steps 2–4 fail the whole call, and `step` gives a result per uid for
    /// steps 5–9 (`WriteContext.forEachTarget`).
    /// - Parameter toDo: the action as messages name it ("ban members").
    func submitBulk(
        _ caller: Caller, guid: String, uids: [String], toDo: String,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void,
        validate: () throws(ModerationError) -> Void = {}, step: @escaping BulkStep
    ) {
        submit(caller, touching: (guid, uids), replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<[String: UserResult]> in
            let guid = try Validation.identifier(guid, field: "guid")
            let uids = try Validation.identifiers(uids, field: "uids")
            try validate()
            return { (context: inout WriteContext) throws(ModerationError) -> [String: UserResult] in
                try context.forEachTarget(uids, in: guid, toDo: toDo, step)
            }
        }
    }
}
