/// How a mutation completed: run now (`done`), or answered from the idempotency store with the
/// bytes the first call's `ReplayEncoder` produced (`replayed`).
public enum MutationResult<T: Sendable>: Sendable {
    /// Run now. `reply`: with an idempotency key, the bytes `ReplayEncoder` made of `result` and
    /// stored under the key, which the caller sends as they are rather than encode the result a
    /// second time (a retry gets the same bytes); nil without a key.
    case done(Result<T, ModerationError>, reply: [UInt8]? = nil)
    case replayed([UInt8])
}

/// Turns a mutation's result into the opaque bytes stored under its idempotency key (the RPC
/// adapter encodes its whole wire reply here; the service never interprets them).
public typealias ReplayEncoder<T> = @Sendable (Result<T, ModerationError>) -> [UInt8]
