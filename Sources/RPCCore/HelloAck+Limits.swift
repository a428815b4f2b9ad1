public import RPCMessages

extension HelloAck {
    /// The error for a call over the limits this HELLO_ACK states, or nil when it is within them
    /// (a limit of 0 states none).
    ///
    /// A client checks before the CALL goes out. The server would refuse the call anyway, but a
    /// frame past its frame limit ends the whole connection with GOAWAY, which the calls on it
    /// see as UNAVAILABLE that "may be retried" — and no retry of a call too large can succeed.
    /// The error is the one the server gives: RESOURCE_EXHAUSTED / `ERR_MESSAGE_TOO_LARGE`,
    /// quoting the server's own limit.
    public func refusal(for sizes: CallSizes) -> RPCError? {
        if maxMessageBytes > 0 && sizes.bodyBytes > Int(maxMessageBytes) {
            return RPCError(
                .messageTooLarge,
                "the request message of \(sizes.bodyBytes) bytes exceeds the server's limit of \(maxMessageBytes) "
                    + "bytes (max_message_bytes in its HELLO_ACK); it was not sent",
                details: ["limit": String(maxMessageBytes)])
        }
        if maxCallHeaderBytes > 0 && sizes.headerBytes > Int(maxCallHeaderBytes) {
            return RPCError(
                .messageTooLarge,
                "the call header of \(sizes.headerBytes) bytes (method, metadata, ids) exceeds the server's limit "
                    + "of \(maxCallHeaderBytes) bytes (max_call_header_bytes in its HELLO_ACK); it was not sent",
                details: ["limit": String(maxCallHeaderBytes)])
        }
        return nil
    }
}
