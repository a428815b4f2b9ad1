import RPCCore

extension ClientConnection {
    /// A call the server has not finished: when the client gives up on it, and who hears of it.
    struct PendingCall {
        /// The monotonic time after which the client fails the call and sends CANCEL; nil for none.
        let deadline: UInt64?
        let receiver: Receiver

        /// Who gets the outcome, on the reader thread (or at once when the call cannot start).
        enum Receiver {
            /// The encoded response body (inflated) or the call's error.
            case unary(@Sendable (Result<[UInt8], RPCError>) -> Void)
            /// Each message, then the final status (nil for OK).
            case stream(onMessage: @Sendable (StreamMessage) -> Void, onEnd: @Sendable (RPCError?) -> Void)
        }

        func fail(_ error: RPCError) {
            switch receiver {
            case .unary(let completion): completion(.failure(error))
            case .stream(_, let onEnd): onEnd(error)
            }
        }
    }
}
