/// The answer to one `PostCheck`: allowed, or why not (a refusal is an answer, not an error).
public struct PostVerdict: Sendable, Equatable {
    /// Why the user may not post; nil when they may. One of `groupNotFound` (also a private group
    /// they are not in), `groupNotJoined`, `bannedGroupMember`, `memberMuted`, `groupFrozen`,
    /// `userBannedFromApp`, then `contentBlocked`.
    public var refusal: ErrorCode?
    /// With `memberMuted`: the mute's `muted_until` (its expiry, or -1 until unmuted); else 0.
    public var mutedUntil: Int64
    /// Allowed, but the user is shadow-banned from the app: the post is shown to its author only.
    public var shadowed: Bool
    /// Allowed, but a flagging content rule matched: the post is marked for review.
    public var flagged: Bool
    /// Every content rule that matched the text, in order of start (none when the standing
    /// refused: the text is not scanned then).
    public var matches: [ContentMatch]

    public init(
        refusal: ErrorCode? = nil, mutedUntil: Int64 = 0, shadowed: Bool = false, flagged: Bool = false,
        matches: [ContentMatch] = []
    ) {
        self.refusal = refusal
        self.mutedUntil = mutedUntil
        self.shadowed = shadowed
        self.flagged = flagged
        self.matches = matches
    }

    public var allowed: Bool { refusal == nil }

    public static let allowed = PostVerdict()

    /// Allowed, shown to its author only (a shadow ban from the app).
    public static let shadowed = PostVerdict(shadowed: true)
}
