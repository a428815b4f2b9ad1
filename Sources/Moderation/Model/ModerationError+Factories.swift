/// The errors the rules raise, each with its message in one place so wording stays consistent.
extension ModerationError {
    static func invalid(_ field: String, _ why: String) -> ModerationError {
        ModerationError(.invalidArgument, "\(field): \(why)")
    }
    static func groupNotFound(_ guid: String) -> ModerationError {
        ModerationError(.groupNotFound, "group \(guid) not found")
    }
    static func webhookNotFound(_ id: String) -> ModerationError {
        ModerationError(.webhookNotFound, "the app has no webhook \(id)")
    }
    static func uidNotFound(_ uid: String) -> ModerationError {
        ModerationError(.uidNotFound, "user \(uid) not found")
    }
    static func groupNotJoined(_ actor: String, _ guid: String) -> ModerationError {
        ModerationError(.groupNotJoined, "user \(actor) is not a member of group \(guid)")
    }
    static func notAMember(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.notAMember, "user \(uid) is not a member of group \(guid)")
    }
    static func permissionDenied(_ actor: String, _ what: String, _ guid: String) -> ModerationError {
        ModerationError(.permissionDenied, "\(actor) may not \(what) in group \(guid)")
    }
    static func noSelfAction(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.groupNoSelfAction, "user \(uid) cannot do this to themselves in group \(guid)")
    }
    static func bannedGroupMember(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.bannedGroupMember, "user \(uid) is banned from group \(guid)")
    }
    static func alreadyJoined(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.alreadyJoined, "user \(uid) is already a member of group \(guid)")
    }
    static func alreadyBanned(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.alreadyBanned, "user \(uid) is already banned from group \(guid)")
    }
    static func userNotBanned(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.userNotBanned, "user \(uid) is not banned from group \(guid)")
    }
    static func alreadyMuted(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.alreadyMuted, "user \(uid) is already muted in group \(guid)")
    }
    static func userNotMuted(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.userNotMuted, "user \(uid) is not muted in group \(guid)")
    }
    static func inviteNotFound(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.inviteNotFound, "user \(uid) has no live invite to group \(guid)")
    }
    static func joinRequestNotFound(_ uid: String, _ guid: String) -> ModerationError {
        ModerationError(.joinRequestNotFound, "user \(uid) has no pending request to join group \(guid)")
    }
    static func bannedFromApp(_ uid: String) -> ModerationError {
        ModerationError(.userBannedFromApp, "user \(uid) is banned from the app")
    }
    static func alreadyBannedFromApp(_ uid: String) -> ModerationError {
        ModerationError(.alreadyBanned, "user \(uid) is already banned from the app")
    }
    static func notBannedFromApp(_ uid: String) -> ModerationError {
        ModerationError(.userNotBanned, "user \(uid) is not banned from the app")
    }
    static func appIsNotAMember(_ field: String = "on_behalf_of") -> ModerationError {
        .invalid(field, "the app is not a member; set on_behalf_of")
    }
    /// A failure of the storage itself (`ERR_INTERNAL`): nothing of the call was kept. For store
    /// implementations.
    public static func storage(_ detail: String) -> ModerationError {
        ModerationError(.internal, "storage failure: \(detail)")
    }
    /// The store cannot be reached (`ERR_STORE_UNAVAILABLE`): a clear, retryable failure. For
    /// store implementations whose storage is a server (PostgreSQL).
    public static func storeUnavailable(_ detail: String) -> ModerationError {
        ModerationError(.storeUnavailable, "the store is unavailable: \(detail)")
    }
}
