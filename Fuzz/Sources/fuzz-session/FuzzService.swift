import ProtoBridge
import RPCMessages

/// The methods the session fuzzer adds to the runtime's services; they take and return the Echo
/// messages, so no proto is needed.
enum FuzzService {
    static let name = "mrpc.fuzz.v1.Fuzz"
    /// Unary, on the worker pool: echoes.
    static let worker = ProtoMethod<EchoRequest, EchoResponse>(service: name, name: "Worker", serverStreaming: false)
    /// Stream, on the loop: sends `payload[0] % 8` messages; finishes unless the payload has two
    /// or more bytes (then the stream stays open until cancelled, drained or closed).
    static let count = ProtoMethod<EchoRequest, EchoResponse>(service: name, name: "Count", serverStreaming: true)
}
