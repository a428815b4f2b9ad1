/// How a mutation completed: run now (`done`), or answered from the idempotency store with the
/// bytes the first call's `ReplayEncoder` produced (`replayed`).
public enum MutationResult<T: Sendable>: Sendable {
    case done(Result<T, ModerationError>)
    case replayed([UInt8])
}

/// Turns a mutation's result into the opaque bytes stored under its idempotency key (the RPC
/// adapter encodes its whole wire reply here; the service never interprets them).
public typealias ReplayEncoder<T> = @Sendable (Result<T, ModerationError>) -> [UInt8]
