public import ProtoBridge
public import RPCCore
import Synchronization

/// A client that keeps one connection and opens a new one when it is needed and the old one
/// is gone (closed, or told to go away by the server).
public final class RPCClient: Sendable {
    public let options: ClientOptions
    private let current = Mutex<ClientConnection?>(nil)

    public init(options: ClientOptions) {
        self.options = options
    }

    /// The open connection, connecting (again) when there is none that can take calls.
    public func connection() throws(RPCError) -> ClientConnection {
        if let existing = current.withLock({ $0 }), existing.isUsable { return existing }
        let fresh = try ClientConnection.connect(options)
        let replaced = current.withLock { slot -> ClientConnection? in
            defer { slot = fresh }
            return slot
        }
        replaced?.close()
        return fresh
    }

    /// Makes a unary call and waits for its result.
    public func unary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) throws(RPCError) -> Response {
        try connection().unary(method, request, options: options)
    }

    /// Makes a unary call from async code.
    public func unary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) async throws(RPCError) -> Response {
        try await connection().unary(method, request, options: options)
    }

    /// Closes the current connection, if any.
    public func close() {
        current.withLock { slot in
            slot?.close()
            slot = nil
        }
    }
}
