/// The writer's part of `FreezeGroup` and `UnfreezeGroup`.
extension WriteContext {
    /// Freezes or unfreezes the group (steps 2–4: visible, actor a member, actor an admin; then
    /// the group's state: `ERR_ALREADY_FROZEN` / `ERR_GROUP_NOT_FROZEN`). A freeze's reason is
    /// kept on the group for its admins and moderators and carried by the `frozen` action.
    mutating func setFrozen(_ frozen: Bool, guid: String, reason: String) throws(ModerationError) -> GroupActionResult {
        var access = try access(guid)
        try access.requireVisible()
        try access.requireMember()
        try access.requireRank(.admin, toDo: frozen ? "freeze the group" : "unfreeze the group")
        if frozen && access.stored.group.frozen {
            throw ModerationError(.alreadyFrozen, "group \(guid) is already frozen")
        }
        if !frozen && !access.stored.group.frozen {
            throw ModerationError(.groupNotFrozen, "group \(guid) is not frozen")
        }
        access.stored.group.frozen = frozen
        access.stored.group.frozenReason = frozen ? reason : ""
        access.stored.group.updatedAt = now
        access.stored.group.version += 1
        try tx.updateGroup(&access.stored, descriptive: true)
        let action = try record(
            frozen ? .frozen : .unfrozen, on: nil, group: access.stored, reason: frozen ? reason : "")
        return GroupActionResult(action: action, group: access.view())
    }
}
