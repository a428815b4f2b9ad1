public import ProtoBridge

/// Where a handler runs.
public enum HandlerExecutor: Sendable {
    /// On the connection's event loop: for work that never blocks (echo, health, reflection).
    case eventLoop
    /// On a worker thread: for work that may block (storage). A call whose deadline has passed by
    /// the time a worker picks it up is not run and gets DEADLINE_EXCEEDED.
    case workerPool
}

/// The server's methods: path → handler, with request/response types and streaming flag.
///
/// Built once before the server starts, then shared read-only by every event loop. Handlers are
/// registered by their generated `ProtoMethod`, so a path and its types cannot disagree.
public struct MethodTable: Sendable {
    private var byPath: [String: RegisteredMethod] = [:]
    private var order: [String] = []

    public init() {}

    /// Registers a unary method.
    ///
    /// - Parameter offloadWhen: with `executor: .workerPool`, decides per request: a request for
    ///   which it returns false runs on the event loop after all (for methods whose cost depends
    ///   on the request, such as a read that is a short index lookup unless it searches).
    /// - Parameter afterTurnInput: what runs on the event loop waits until the loop has read its
    ///   turn's input from every connection (`ServerEnvironment.afterTurnInput`): for
    ///   handlers that can share one wait among the calls of a turn that arrived before it (a
    ///   store's check of its cache), rather than wait once per connection.
    /// - Parameter allowsAnonymous: a caller with no API key at all may call it (the health
    ///   checks, which load balancers and Kubernetes' probes make without one); every other
    ///   method refuses such a caller with UNAUTHENTICATED.
    public mutating func addUnary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, executor: HandlerExecutor = .eventLoop,
        offloadWhen: (@Sendable (Request) -> Bool)? = nil, afterTurnInput: Bool = false,
        allowsAnonymous: Bool = false,
        _ handler: @escaping @Sendable (Request, CallContext, UnaryResponder<Response>) -> Void
    ) {
        precondition(!method.clientStreaming, "\(method.path) is a client-streaming method")
        precondition(!method.serverStreaming, "\(method.path) is a server-streaming method")
        add(
            RegisteredMethod(description: method, executor: executor, allowsAnonymous: allowsAnonymous) {
                (body, context, call, _, placement) throws(RPCError) in
                let request = try RegisteredMethod.decode(Request.self, body)
                if let offload = placement.offload, offloadWhen?(request) ?? true {
                    offload { handler(request, context, UnaryResponder(call: call)) }
                } else if afterTurnInput, let later = placement.afterTurnInput {
                    later { handler(request, context, UnaryResponder(call: call)) }
                } else {
                    handler(request, context, UnaryResponder(call: call))
                }
            })
    }

    /// Registers a server-streaming method (`allowsAnonymous` as for `addUnary`).
    public mutating func addServerStream<Request, Response>(
        _ method: ProtoMethod<Request, Response>, executor: HandlerExecutor = .eventLoop, allowsAnonymous: Bool = false,
        _ handler: @escaping @Sendable (Request, CallContext, ServerStream<Response>) -> Void
    ) {
        precondition(!method.clientStreaming, "\(method.path) is a client-streaming method")
        precondition(method.serverStreaming, "\(method.path) is a unary method")
        add(
            RegisteredMethod(description: method, executor: executor, allowsAnonymous: allowsAnonymous) {
                (body, context, call, pendingLimit, placement) throws(RPCError) in
                let request = try RegisteredMethod.decode(Request.self, body)
                if let offload = placement.offload {
                    offload { handler(request, context, ServerStream(call: call, pendingLimit: pendingLimit)) }
                } else {
                    handler(request, context, ServerStream(call: call, pendingLimit: pendingLimit))
                }
            })
    }

    private mutating func add(_ method: RegisteredMethod) {
        precondition(byPath[method.description.path] == nil, "\(method.description.path) is registered twice")
        method.index = order.count
        byPath[method.description.path] = method
        order.append(method.description.path)
    }

    /// The method registered at `path`, if any.
    public subscript(path: String) -> RegisteredMethod? { byPath[path] }

    /// Every registered method, in registration order.
    public var methods: [any ProtoMethodDescription] { order.map { byPath[$0]!.description } }
}

/// A method of the table with its handler behind a type-erased entry point.
///
/// A class: a call passes its method from admission to its start, and a reference is one retain
/// where the struct's description, handler and closures were one each.
///
/// Invariant: `index` is set once, when the table adds the method, before any server shares it.
public final class RegisteredMethod: @unchecked Sendable {
    public let description: any ProtoMethodDescription
    /// The description's path and streaming flag, kept here: read for every call, and through
    /// the existential each read is a call.
    public let path: String
    public let serverStreaming: Bool
    public let executor: HandlerExecutor
    /// Position in the table (registration order), for per-method metrics.
    public fileprivate(set) var index = 0
    /// A method of the runtime's reflection or health services (`RuntimeServices.isInternal`).
    public let isInternal: Bool
    /// A caller with no API key may call it (see `MethodTable.addUnary`).
    public let allowsAnonymous: Bool
    /// Runs work elsewhere (a worker), or later, instead of now.
    typealias Offload = @Sendable (@escaping @Sendable () -> Void) -> Void

    /// Where a call's handler may run besides at once, on the thread that starts it.
    struct Placement: Sendable {
        /// A worker (the method's executor is `.workerPool`).
        var offload: Offload?
        /// The event loop, once it has read its turn's input (nil off a loop).
        var afterTurnInput: Offload?

        /// At once, on this thread.
        static let immediate = Placement()
    }

    /// Decodes the request body (throwing INVALID_ARGUMENT for a bad one) and runs the handler,
    /// where `Placement` allows and the registration asks. The Int is the stream's pending-bytes
    /// limit.
    let start: @Sendable (UnsafeRawBufferPointer, CallContext, ServerCall, Int, Placement) throws(RPCError) -> Void

    init(
        description: any ProtoMethodDescription, executor: HandlerExecutor, allowsAnonymous: Bool,
        start:
            @escaping @Sendable (UnsafeRawBufferPointer, CallContext, ServerCall, Int, Placement) throws(RPCError) ->
            Void
    ) {
        self.description = description
        path = description.path
        serverStreaming = description.serverStreaming
        self.executor = executor
        self.allowsAnonymous = allowsAnonymous
        self.start = start
        isInternal = RuntimeServices.isInternal(path: description.path)
    }

    static func decode<M: ProtoMessage>(_ type: M.Type, _ body: UnsafeRawBufferPointer) throws(RPCError) -> M {
        do {
            return try M(serializedBytes: body)
        } catch {
            throw RPCError.invalidArgument(error.description).caused(by: error)
        }
    }
}
