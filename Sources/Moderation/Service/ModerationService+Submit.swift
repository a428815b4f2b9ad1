extension ModerationService {
    /// The part of a mutation that runs on the writer, built by `prepare` on the calling thread.
    typealias WriteBody<Value> = @Sendable (inout WriteContext) throws(ModerationError) -> Value

    /// Runs step 1 (arguments, and any slow hashing) on the calling thread, then queues the rest
    /// to the store's writer.
    ///
    /// A call that fails step 1 without an idempotency key completes at once, since it cannot
    /// change anything; with a key it still goes through the writer, so a retry of an earlier
    /// call with the same key replays that call's reply.
    ///
    /// `touching` names the group the write works on and the users it acts on (raw, as the
    /// request gave them), for the store's `WriteFootprint`: the actor is added to them.
    /// `admission` is a check the writer makes before anything else, idempotency included
    /// (`PendingMutation`).
    ///
    /// The writer's first step after the arguments is the acting user's ban from the app
    /// (`ERR_USER_BANNED_FROM_APP`), inside the write so that it is exact and an idempotency key
    /// records its refusal like any other; `checksAppBan: false` leaves it to the body (DeleteUser,
    /// which a banned user may still make about themselves).
    func submit<Value: Sendable>(
        _ caller: Caller, touching: (guid: String, uids: [String])? = nil, replay: ReplayEncoder<Value>?,
        completion: @escaping @Sendable (MutationResult<Value>) -> Void,
        retry: (@Sendable () -> Void)? = nil, admission: PendingMutation<Value>.Admission? = nil,
        checksAppBan: Bool = true, prepare: () throws(ModerationError) -> WriteBody<Value>
    ) {
        let validated: ValidatedCaller
        do {
            validated = try ValidatedCaller(caller)
        } catch {
            completion(.done(.failure(error)))
            return
        }
        let body: WriteBody<Value>
        do {
            let prepared = try prepare()
            if checksAppBan && validated.actor != nil {
                body = { (context: inout WriteContext) throws(ModerationError) -> Value in
                    try context.requireNotBannedFromApp()
                    return try prepared(&context)
                }
            } else {
                body = prepared
            }
        } catch {
            if validated.idempotencyKey.isEmpty {
                completion(.done(.failure(error)))
                return
            }
            body = { _ throws(ModerationError) in throw error }
        }
        store.submit(
            PendingMutation(
                caller: validated, clock: clock, idempotencyWindowMs: configuration.idempotencyWindowMs, replay: replay,
                completion: completion, retry: retry, footprint: touching.flatMap { footprint(validated, $0) },
                admission: admission, body: body))
    }

    /// The footprint of a write on `touching.guid` by `caller`; nil when an identifier is not
    /// valid (the write then fails before it reads anything).
    private func footprint(_ caller: ValidatedCaller, _ touching: (guid: String, uids: [String])) -> WriteFootprint? {
        guard let guid = try? Validation.identifier(touching.guid, field: "guid") else { return nil }
        var uids: [String] = caller.actor.map { [$0] } ?? []
        for raw in touching.uids {
            guard let uid = try? Validation.identifier(raw, field: "uid") else { return nil }
            uids.append(uid)
        }
        let replay =
            caller.idempotencyKey.isEmpty ? nil : ReplayKey(actor: caller.actor ?? "", key: caller.idempotencyKey)
        return WriteFootprint(app: caller.app, guid: guid, uids: uids, replay: replay)
    }

    /// Runs `body` in a read snapshot after validating the caller and checking that the acting
    /// user is not banned from the app (`ERR_USER_BANNED_FROM_APP`).
    func read<T>(_ caller: Caller, _ body: (ReadContext) throws(ModerationError) -> T) throws(ModerationError) -> T {
        try read(ValidatedCaller(caller), arrivedAt: caller.receivedAt, body)
    }

    /// `read` for a caller validated already (a call whose arguments need the acting user to be
    /// checked: CheckPost), that arrived at `instant`.
    func read<T>(
        _ caller: ValidatedCaller, arrivedAt instant: UInt64?, _ body: (ReadContext) throws(ModerationError) -> T
    ) throws(ModerationError) -> T {
        let now = clock()
        return try store.read(arrivedAt: instant) { (snapshot: any StoreSnapshot) throws(ModerationError) -> T in
            let context = ReadContext(snapshot: snapshot, caller: caller, now: now)
            try context.requireNotBannedFromApp()
            return try body(context)
        }
    }
}
