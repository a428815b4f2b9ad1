import Synchronization

/// A listener's TLS context that a reload replaces: connections accepted after `reload` get the
/// new certificate, connections already open keep the context they started with.
///
/// A listener asks for `current` once per accepted connection. A reload that fails (a file that
/// does not load, a key that does not match) throws and leaves the current context in place.
/// Several listeners (the framed one, a gRPC one) may share one, so one reload renews them all.
public final class ReloadableTLSContext: Sendable {
    public let configuration: TLSServerConfiguration
    private let context: Mutex<TLSContext>

    /// Loads the context.
    /// - Throws: `TLSError` naming the file that does not load.
    public init(_ configuration: TLSServerConfiguration) throws(TLSError) {
        self.configuration = configuration
        context = Mutex(try TLSContext.server(configuration))
    }

    /// The context new connections start with.
    public var current: TLSContext { context.withLock { $0 } }

    /// Reads the files again and makes the result current.
    /// - Returns: the new context.
    /// - Throws: `TLSError` when the files do not load; the previous context stays current.
    @discardableResult
    public func reload() throws(TLSError) -> TLSContext {
        let fresh = try TLSContext.server(configuration)
        context.withLock { $0 = fresh }
        return fresh
    }
}
