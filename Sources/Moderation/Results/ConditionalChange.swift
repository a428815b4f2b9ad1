/// The result of a change that may find its target already as asked (`ifNotBanned`,
/// `onlyIfBanned`, `ifNotMuted`, `onlyIfMuted`): then it succeeds without recording an action.
public protocol ConditionalChange {
    /// The action recorded; nil when the change found nothing to do.
    var action: ActionRecord? { get }
}

extension ConditionalChange {
    /// False when the change found its target already as asked.
    public var changed: Bool { action != nil }

    /// The result as one uid's part of a bulk call.
    var userResult: UserResult { action.map { .changed(seq: $0.seq) } ?? .unchanged }
}
