extension ModerationService {
    /// Freezes a group (`FreezeGroup`): admins, the owner and the app. While it is frozen only
    /// moderators and above may post (`CheckPost`); joining, leaving and every moderation call
    /// work as before.
    ///
    /// Order: arguments (reason ≤ 512) → group visible → actor member → actor admin → not frozen
    /// (`ERR_ALREADY_FROZEN`).
    public func freezeGroup(
        _ caller: Caller, guid: String, reason: String = "", replay: @escaping ReplayEncoder<GroupActionResult>,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<GroupActionResult> in
            let guid = try Validation.identifier(guid, field: "guid")
            try Validation.text(reason, field: "reason", max: Validation.maxReason)
            return { (context: inout WriteContext) throws(ModerationError) -> GroupActionResult in
                try context.setFrozen(true, guid: guid, reason: reason)
            }
        }
    }

    /// Unfreezes a group (`UnfreezeGroup`): admins, the owner and the app.
    ///
    /// Order: arguments → group visible → actor member → actor admin → frozen
    /// (`ERR_GROUP_NOT_FROZEN`).
    public func unfreezeGroup(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<GroupActionResult>,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<GroupActionResult> in
            let guid = try Validation.identifier(guid, field: "guid")
            return { (context: inout WriteContext) throws(ModerationError) -> GroupActionResult in
                try context.setFrozen(false, guid: guid, reason: "")
            }
        }
    }
}
