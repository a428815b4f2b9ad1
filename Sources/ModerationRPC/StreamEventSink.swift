internal import Glibc
import Moderation
import ModerationEvents
import ModerationMessages
import ProtoBridge
import RPCCore
import ThreadSupport

/// The event hub's sink over a `Subscribe` server stream.
struct StreamEventSink: EventSink {
    /// The stream's untyped writer: the events come encoded, and a call through the typed
    /// stream would go through generic code for each of the fan-out's messages.
    let stream: StreamWriter
    /// Where the stream's port is, recorded while it is at hand: the fan-out's hint for the port
    /// must not touch it to find it (opening the existential loads its type from the object, the
    /// very miss the hint is there to hide).
    private let portAddress: UInt

    init(stream: ServerStream<SubscribeResponse>) {
        self.stream = stream.writer
        portAddress = UInt(bitPattern: MemoryHint.address(of: stream.writer.port))
    }

    func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome {
        send(
            encoded: SubscribeResponse(started: SubscriptionStarted(afterSeq: afterSeq, headSeq: headSeq))
                .serializedBytes())
    }

    func send(encoded: [UInt8]) -> EventSendOutcome {
        switch stream.send(encoded: encoded) {
        case .sent: .sent
        case .overloaded: .overloaded
        case .closed: .closed
        }
    }

    /// The writer's fields and lock (depth 0), its connection's port (depth 1), then the port's
    /// queue (depth 2): what `send` touches, in the order it reaches them.
    func prefetch(depth: Int) {
        switch depth {
        case 0: MemoryHint.prefetch(stream, lines: 3)
        case 1: MemoryHint.prefetch(address: UnsafeRawPointer(bitPattern: portAddress)!, lines: 2)
        default: stream.port.prefetchQueue()
        }
    }

    func waitForCapacity(milliseconds: Int) -> Bool {
        let deadline = monotonicMilliseconds() + milliseconds
        while stream.pendingBytes > stream.pendingLimit / 2 {
            if stream.call.isCompleted || monotonicMilliseconds() >= deadline { return false }
            usleep(1_000)
        }
        return true
    }

    func end(_ reason: SubscriptionEnd) {
        switch reason {
        case .slowConsumer(let lastSeq):
            stream.finish(
                RPCError(
                    .slowConsumer, "the subscriber did not keep up; resume with after_seq = \(lastSeq)",
                    details: ["last_seq": String(lastSeq)]))
        case .shuttingDown(let lastSeq):
            stream.finish(
                .unavailable(
                    "the server is shutting down; resume with after_seq = \(lastSeq)",
                    details: ["last_seq": String(lastSeq)]))
        case .failed(let code, let message, let lastSeq):
            stream.finish(
                RPCError(code: .internal, errorCode: code, message: message, details: ["last_seq": String(lastSeq)]))
        case .revoked(var error, let lastSeq):
            error.details["last_seq"] = String(lastSeq)
            stream.finish(RPCError(error))
        }
    }

    func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {
        stream.onTermination { termination in
            handler(termination == .draining ? .shuttingDown : .gone)
        }
    }

    private func monotonicMilliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
}
