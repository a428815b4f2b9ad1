/// The content step of `CheckPost`, after the user's standing allowed the post: any blocking
/// match refuses it (`ERR_CONTENT_BLOCKED`), else any flagging match allows it marked `flagged`.
/// Every match is listed either way; a shadow ban's mark stays on an allowed post.
enum ContentDecision {
    static func verdict(_ standing: PostVerdict, matches: [(match: ContentMatch, action: ContentAction)])
        -> PostVerdict
    {
        guard standing.allowed, !matches.isEmpty else { return standing }
        var verdict = standing
        verdict.matches = matches.map(\.match)
        if matches.contains(where: { $0.action == .block }) {
            verdict.refusal = .contentBlocked
            verdict.shadowed = false
        } else {
            verdict.flagged = true
        }
        return verdict
    }
}
