/// The answer to one `PostCheck`: allowed, or why not (a refusal is an answer, not an error).
public struct PostVerdict: Sendable, Equatable {
    /// Why the user may not post; nil when they may. One of `groupNotFound` (also a private group
    /// they are not in), `groupNotJoined`, `bannedGroupMember`, `memberMuted`, `groupFrozen`,
    /// `userBannedFromApp`.
    public var refusal: ErrorCode?
    /// With `memberMuted`: the mute's `muted_until` (its expiry, or -1 until unmuted); else 0.
    public var mutedUntil: Int64
    /// Allowed, but the user is shadow-banned from the app: the post is shown to its author only.
    public var shadowed: Bool

    public init(refusal: ErrorCode? = nil, mutedUntil: Int64 = 0, shadowed: Bool = false) {
        self.refusal = refusal
        self.mutedUntil = mutedUntil
        self.shadowed = shadowed
    }

    public var allowed: Bool { refusal == nil }

    public static let allowed = PostVerdict()

    /// Allowed, shown to its author only (a shadow ban from the app).
    public static let shadowed = PostVerdict(shadowed: true)
}
