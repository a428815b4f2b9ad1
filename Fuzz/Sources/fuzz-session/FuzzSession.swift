import FuzzSupport
import ProtoBridge
import RPCCore
import RPCMessages

/// The methods a session under fuzzing serves: the runtime's services (Echo, health, reflection)
/// plus a unary method on the worker pool and a server stream, so both executors and streams are
/// reachable from the input.
private let methods: MethodTable = {
    var table = MethodTable()
    table.addUnary(FuzzService.worker, executor: .workerPool) { request, _, responder in
        responder.succeed(EchoResponse(payload: request.payload))
    }
    table.addServerStream(FuzzService.count) { request, _, stream in
        // As a subscription does: told of an end from outside, it finishes the stream (the
        // handler captures the stream, which holds the call).
        stream.onTermination { reason in
            if reason == .draining { stream.finish(.unavailable("draining", details: ["last_seq": "0"])) }
        }
        let count = Int(request.payload.first ?? 0) % 8
        for seq in 0..<count {
            _ = stream.send(EchoResponse(payload: Array("fuzz event \(seq): the same words again and again".utf8)))
        }
        if request.payload.count < 2 { stream.finish() } // otherwise left open until the session ends it
    }
    RuntimeServices.register(in: &table, health: HealthStatus(), fileDescriptorSets: [RPCSchema.fileDescriptorSet])
    return table
}()

@main
enum Main {
    static func main() { runFuzzer(fuzzSession) }
}

/// libFuzzer entry point: arbitrary bytes into one connection's core, as the transport feeds them.
///
/// Byte 0: bit 0 opens the connection first with the preface and a valid HELLO (so the input
/// reaches calls), bit 1 makes that HELLO accept deflate, bits 2–7 choose the size of the reads
/// the input is cut into (0: one read). The rest is the peer's bytes. After every read the worker
/// pool runs and completions are delivered, as the event loop would; at the end time passes (deadlines,
/// idle and keepalive timers), the server drains and the connection closes.
///
/// Properties: the session never consumes more than it was given, whatever it writes is a
/// sequence of well-formed frames a client can parse, and nothing traps or touches freed memory.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    guard size > 0 else { return 0 }
    let control = data[0]
    let peerBytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let driver = SessionDriver(methods: methods)
    if control & 1 == 1 {
        driver.feed(FuzzFrames.opening(acceptDeflate: control & 2 == 2))
        fuzzCheck(!driver.session.closeRequested, "a valid preface and HELLO closed the connection")
    }
    let chunk = Int(control >> 2) * 3
    if chunk == 0 {
        driver.feed(peerBytes)
    } else {
        var offset = 0
        while offset < peerBytes.count, !driver.session.closeRequested {
            driver.feed(Array(peerBytes[offset..<min(offset + chunk, peerBytes.count)]))
            driver.clock.advance(ms: 1)
            offset += chunk
        }
    }
    driver.finish()
    return 0
}
