import Moderation
import ProtoBridge
import RPCCore

extension Caller {
    /// The domain's caller for an RPC: the connection's app and the CallHeader's fields.
    init(_ context: CallContext) {
        self.init(
            app: context.appID, actor: context.onBehalfOf.isEmpty ? nil : context.onBehalfOf,
            idempotencyKey: context.idempotencyKey, requestID: context.requestID, receivedAt: context.receivedAt)
    }
}

extension MethodTable {
    /// Registers a read, answered with `body`'s value. A read runs on the event loop when
    /// `offloadWhen` says it is short (a few index lookups in a WAL snapshot: SQLite readers never
    /// wait for a lock, and a hop to a worker and back costs more than the read); a read that may
    /// scan (a search, a filtered action log) goes to a worker so the loop's other connections
    /// do not wait for it. The default sends every read to a worker. With `afterTurnInput`, one on
    /// the loop waits until the loop has read its turn's input: a store that checks its cache
    /// once for every read that arrived before the check (PostgreSQL's) then checks once a turn.
    mutating func addRead<Request, Response>(
        _ method: ProtoMethod<Request, Response>, afterTurnInput: Bool = false,
        offloadWhen: @escaping @Sendable (Request) -> Bool = { _ in true },
        _ body: @escaping @Sendable (Request, Caller) throws(ModerationError) -> Response
    ) {
        addUnary(method, executor: .workerPool, offloadWhen: offloadWhen, afterTurnInput: afterTurnInput) {
            request, context, responder in
            do throws(ModerationError) {
                responder.succeed(try body(request, Caller(context)))
            } catch {
                responder.fail(RPCError(error))
            }
        }
    }

    /// Registers a mutation. `start` maps the request and hands it to the service with the
    /// replay encoder (the whole REPLY payload, recorded with an idempotency key) and the
    /// completion, which answers once the change is durable — with the payload recorded for its
    /// key when there is one (encoded once), or a recorded reply for a retry.
    /// With the worker pool as `executor`, `offloadWhen` says which requests go there (by
    /// default all); the others start on the event loop.
    mutating func addMutation<Request, Response, Result: Sendable>(
        _ method: ProtoMethod<Request, Response>, executor: HandlerExecutor = .eventLoop,
        offloadWhen: (@Sendable (Request) -> Bool)? = nil,
        respond: @escaping @Sendable (Result) -> Response,
        _ start:
            @escaping @Sendable (
                Request, Caller, @escaping ReplayEncoder<Result>, @escaping @Sendable (MutationResult<Result>) -> Void
            ) throws(ModerationError) -> Void
    ) {
        addUnary(method, executor: executor, offloadWhen: offloadWhen) { request, context, responder in
            let replay: ReplayEncoder<Result> = { result in
                RecordedReply.encode(result.map(respond).mapError(RPCError.init))
            }
            do throws(ModerationError) {
                try start(request, Caller(context), replay) { outcome in
                    switch outcome {
                    case .done(let result, reply: nil): responder.complete(result.map(respond).mapError(RPCError.init))
                    case .done(_, reply: let payload?), .replayed(let payload): responder.replay(payload: payload)
                    }
                }
            } catch {
                responder.fail(RPCError(error))
            }
        }
    }
}
