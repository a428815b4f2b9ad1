/// What an entry of the action log records; the raw values are the seeds' action strings.
public enum ActionKind: String, Sendable, CaseIterable {
    case created
    case updated
    case deleted
    case joined
    case left
    case added
    case kicked
    case banned
    case unbanned
    case scopeChanged
    case ownershipTransferred
    case muted
    case unmuted
    case frozen
    case unfrozen
    case userDeleted
    case invited
    case inviteAccepted
    case inviteDeclined
    case inviteRevoked
    case joinRequested
    case joinRequestApproved
    case joinRequestRejected
    case joinRequestCancelled
}
