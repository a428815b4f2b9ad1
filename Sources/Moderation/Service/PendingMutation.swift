/// One mutation on its way through the store's writer: runs the rules in the transaction,
/// handles the idempotency key, and reports the outcome once it is durable.
///
/// With an idempotency key: a reply stored under (app, actor, key) within the window is replayed
/// and nothing changes; otherwise the change runs in a nested savepoint (a domain failure rolls
/// back the change but keeps the stored reply), `replay` turns the result into bytes, and those
/// are stored in the same transaction and handed to the caller with the result. Storage failures
/// (`isStoreFailure`) store nothing, so a retry runs again. Neither does a refusal of `admission`,
/// which runs first: it stands for a check the service could have made before queuing the write,
/// and a retry after it must run again.
final class PendingMutation<Value: Sendable>: StoreWrite, @unchecked Sendable {
    // Invariant: `outcome` is written by `apply` (on the store's writer, possibly more than once
    // when a batch is run again) and read by `finish`, which the store calls once, after the
    // last `apply`, with a happens-before edge between them (the SQLite store hands the batch
    // over through a locked queue). Every other stored property is immutable and Sendable.
    typealias Body = @Sendable (inout WriteContext) throws(ModerationError) -> Value
    /// A check before anything else, idempotency included (see the type's comment).
    typealias Admission = @Sendable (any StoreTransaction, _ now: Int64) throws(ModerationError) -> Void

    private let caller: ValidatedCaller
    private let clock: @Sendable () -> Int64
    private let idempotencyWindowMs: Int64
    private let body: Body
    private let replay: ReplayEncoder<Value>?
    private let completion: @Sendable (MutationResult<Value>) -> Void
    private let retry: (@Sendable () -> Void)?
    private let admission: Admission?
    let footprint: WriteFootprint?
    private var outcome: MutationResult<Value>?

    init(
        caller: ValidatedCaller, clock: @escaping @Sendable () -> Int64, idempotencyWindowMs: Int64,
        replay: ReplayEncoder<Value>?, completion: @escaping @Sendable (MutationResult<Value>) -> Void,
        retry: (@Sendable () -> Void)? = nil, footprint: WriteFootprint? = nil, admission: Admission? = nil,
        body: @escaping Body
    ) {
        self.caller = caller
        self.clock = clock
        self.idempotencyWindowMs = idempotencyWindowMs
        self.replay = replay
        self.completion = completion
        self.retry = retry
        self.footprint = footprint
        self.admission = admission
        self.body = body
    }

    func apply(_ transaction: any StoreTransaction) throws(ModerationError) {
        let now = clock()
        try admission?(transaction, now)
        var context = WriteContext(tx: transaction, caller: caller, now: now)
        guard !caller.idempotencyKey.isEmpty, let replay else {
            outcome = .done(.success(try body(&context)))
            return
        }
        let actor = caller.actor ?? ""
        if let appID = try transaction.appID(named: caller.app),
            let stored = try transaction.idempotentReply(
                appID: appID, actor: actor, key: caller.idempotencyKey, notBefore: now - idempotencyWindowMs)
        {
            outcome = .replayed(stored)
            return
        }
        let result: Result<Value, ModerationError>
        do {
            result = .success(try transaction.savepoint { () throws(ModerationError) -> Value in try body(&context) })
        } catch  where !error.code.isStoreFailure && error.code != .passwordChanged {
            result = .failure(error)
        }
        let bytes = replay(result)
        let appID = try context.ensureAppID()
        try transaction.saveIdempotentReply(
            appID: appID, actor: actor, key: caller.idempotencyKey, reply: bytes, at: now)
        outcome = .done(result, reply: bytes)
    }

    /// The caller's app; none for maintenance, which runs as the app "" over every app.
    var affinity: String? { caller.app.isEmpty ? nil : caller.app }

    func finish(_ failure: ModerationError?) {
        guard let failure else {
            completion(outcome ?? .done(.failure(.storage("the write finished without an outcome"))))
            return
        }
        if failure.code == .passwordChanged, let retry {
            retry()
            return
        }
        completion(.done(.failure(failure)))
    }
}
