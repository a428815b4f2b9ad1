import CommandLineSupport
import ProtoSchema
import RPCCore
import RPCPosix
import Synchronization

/// `rpc-probe HOST:PORT call METHOD -d JSON`: one call, the response as JSON.
enum CallCommand: ProbeVerb {
    static let name = "call"

    static let help = """
        usage: rpc-probe [flags] HOST:PORT call METHOD [call flags]
               rpc-probe [flags] HOST:PORT METHOD [call flags]     (grpcurl's form)

        Calls METHOD ("pkg.Service/Method", "/pkg.Service/Method" or "pkg.Service.Method") with the
        request given as JSON and prints the response as JSON (proto3 JSON mapping: lowerCamelCase
        names, enums by name, 64-bit integers as strings, bytes as base64; proto field names and enum
        numbers are accepted on input). A server-streaming METHOD prints each message, one JSON object
        a line, until the stream ends. Unknown fields and values of the wrong type are refused, naming
        the field.

        call flags:
          -d JSON | -d @FILE | -d @-   the request (default {}); @- (or @) reads standard input
          --format json|text           the request and response as proto3 JSON (default) or in
                                       protobuf's text format (uid: "alice" name: "Alice")
          --emit-defaults              print fields at their default values too ("", 0, false, [], {},
                                       null for an unset message)
          --emit-envelope              print one JSON object instead: method, status (code, codeName,
                                       errorCode, message, details), response (or messages) and timing
                                       (connectMs, schemaMs, callMs, totalMs), whatever the outcome
          --idempotency-key KEY        CallHeader.idempotency_key
          --request-id ID              CallHeader.request_id
          --compress                   ask for a deflate-compressed response or stream

        A failed call prints its status (code, ERR_ code, message, details) on standard error and
        exits 64 + the status code; a request that cannot be built (bad JSON, unknown method) exits 1.
        """

    /// What the call flags set.
    struct Flags {
        var data: String?
        var emitDefaults = false
        var emitEnvelope = false
        var compress = false
        var idempotencyKey = ""
        var requestID = ""
        var format = MessageFormat.json
    }

    static let defaults = Flags()

    static let flags: [ProbeFlag<Flags>] = [
        ProbeFlag("-d", "--data") { flags, value in flags.data = value.text },
        ProbeFlag("--emit-defaults") { flags, on in flags.emitDefaults = on },
        ProbeFlag("--emit-envelope") { flags, on in flags.emitEnvelope = on },
        ProbeFlag("--compress") { flags, on in flags.compress = on },
        ProbeFlag("--idempotency-key") { flags, value in flags.idempotencyKey = value.text },
        ProbeFlag("--request-id") { flags, value in flags.requestID = value.text },
        ProbeFlag("--format") { flags, value throws(ArgumentError) in flags.format = try MessageFormat(value) },
    ]

    static func run(_ flags: Flags, arguments positionals: [String], options: ProbeOptions) throws(ProbeError)
        -> Int32
    {
        let dataArgument = flags.data
        let emitDefaults = flags.emitDefaults
        var emitEnvelope = flags.emitEnvelope
        let compress = flags.compress
        let idempotencyKey = flags.idempotencyKey
        let requestID = flags.requestID
        guard positionals.count == 1, let name = positionals.first else {
            throw .usage("call: expected one METHOD (see rpc-probe call --help)")
        }
        guard !(emitEnvelope && flags.format == .text) else {
            throw .usage("call: --emit-envelope prints JSON; drop --format text (or --emit-envelope)")
        }
        let data = try dataArgument.map(RequestData.read) ?? (flags.format == .json ? "{}" : "")

        let session = ProbeSession(options: options)
        let started = monotonicNow()
        var envelope = Envelope(method: Envelope.path(forName: name))
        var callNanoseconds: UInt64?
        defer {
            if emitEnvelope {
                envelope.timing = Envelope.Timing(
                    connectMs: session.connectNanoseconds.map(milliseconds),
                    schemaMs: session.schemaNanoseconds.map(milliseconds),
                    callMs: callNanoseconds.map(milliseconds), totalMs: milliseconds(monotonicNow() - started))
                ProbeOutput.standardOutput(envelope.json)
            }
        }
        do throws(ProbeError) {
            let method = try session.method(name)
            envelope.method = method.path
            envelope.streaming = method.serverStreaming
            let body = try session.request(data, format: flags.format, for: method)
            var callOptions = options.callOptions()
            callOptions.idempotencyKey = idempotencyKey
            callOptions.requestID = requestID
            callOptions.acceptDeflate = compress
            let connection: ClientConnection?
            let grpc: GRPCProbeClient?
            if options.grpc {
                (connection, grpc) = (nil, try session.connectGRPC())
            } else {
                (connection, grpc) = (try session.connect(), nil)
            }
            if options.verbose {
                printError(
                    "calling \(method.path): request \(body.count) bytes, on behalf of "
                        + (options.onBehalfOf.isEmpty ? "the app" : options.onBehalfOf))
            }
            // Pretty for one response; one compact object a line for streams and the envelope.
            let format = MessagePrinter(
                format: flags.format, emitDefaults: emitDefaults, pretty: !emitEnvelope && !method.serverStreaming)
            let callStarted = monotonicNow()
            let outcome: (responses: [String], failure: RPCError?)
            if let grpc {
                var metadata = options.grpcMetadata()
                metadata.idempotencyKey = idempotencyKey
                metadata.requestID = requestID
                metadata.acceptCompressed = compress
                outcome = grpcCall(
                    method, body: body, on: grpc, metadata: metadata, timeoutMs: callOptions.timeoutMs, format: format,
                    collect: emitEnvelope, verbose: options.verbose)
            } else if let connection {
                outcome =
                    method.serverStreaming
                    ? stream(
                        method, body: body, on: connection, options: callOptions, format: format,
                        collect: emitEnvelope, verbose: options.verbose)
                    : unary(
                        method, body: body, on: connection, options: callOptions, format: format,
                        verbose: options.verbose)
            } else {
                outcome = ([], nil)
            }
            callNanoseconds = monotonicNow() - callStarted
            envelope.responses = outcome.responses
            envelope.failure = outcome.failure
            if options.verbose { printError("call took \(BenchReport.fixed(milliseconds(callNanoseconds!), 3)) ms") }
            if let failure = outcome.failure {
                if !emitEnvelope { printError(Envelope.text(failure)) }
                return ProbeError.exitCode(for: failure)
            }
            if !emitEnvelope && !method.serverStreaming { ProbeOutput.standardOutput(outcome.responses.first ?? "{}") }
            return 0
        } catch {
            guard emitEnvelope, case .call(let failure) = error else {
                emitEnvelope = false
                throw error
            }
            envelope.failure = failure
            return ProbeError.exitCode(for: failure)
        }
    }

    /// A unary call: the response as JSON, or the failure.
    private static func unary(
        _ method: MethodDescriptor, body: [UInt8], on connection: ClientConnection, options: CallOptions,
        format: MessagePrinter, verbose: Bool
    ) -> (responses: [String], failure: RPCError?) {
        do throws(RPCError) {
            let reply = try connection.call(path: method.path, body: body, options: options)
            if verbose { printError("response: \(reply.count) bytes") }
            return ([render(reply, as: method.outputType, format: format)], nil)
        } catch {
            return ([], error)
        }
    }

    /// A server stream to its end: each message printed as it arrives (or collected for the
    /// envelope), then the final status.
    private static func stream(
        _ method: MethodDescriptor, body: [UInt8], on connection: ClientConnection, options: CallOptions,
        format: MessagePrinter, collect: Bool, verbose: Bool
    ) -> (responses: [String], failure: RPCError?) {
        let lines = Mutex<[String]>([])
        let output = method.outputType
        let failure = connection.streamToEnd(path: method.path, body: body, options: options) { message in
            let text = render(message.body, as: output, format: format)
            if collect { lines.withLock { $0.append(text) } } else { ProbeOutput.standardOutput(text) }
            if verbose { printError("message: \(size(of: message))") }
        }
        return (lines.withLock { $0 }, failure)
    }

    /// A call over `--grpc`: a unary response, or a server stream's messages printed as they
    /// arrive (or collected for the envelope), then the final status.
    private static func grpcCall(
        _ method: MethodDescriptor, body: [UInt8], on client: GRPCProbeClient, metadata: GRPCProbeClient.Metadata,
        timeoutMs: UInt32, format: MessagePrinter, collect: Bool, verbose: Bool
    ) -> (responses: [String], failure: RPCError?) {
        var lines: [String] = []
        do throws(RPCError) {
            if !method.serverStreaming {
                let reply = try client.unary(path: method.path, body: body, metadata: metadata, timeoutMs: timeoutMs)
                if verbose { printError("response: \(size(of: reply))") }
                return ([render(reply.bytes, as: method.outputType, format: format)], nil)
            }
            let call = try client.start(path: method.path, metadata: metadata, timeoutMs: timeoutMs)
            try client.send(call, body, end: true)
            while let message = try client.next(call) {
                let text = render(message.bytes, as: method.outputType, format: format)
                if collect { lines.append(text) } else { ProbeOutput.standardOutput(text) }
                if verbose { printError("message: \(size(of: message))") }
            }
            return (lines, nil)
        } catch {
            return (lines, error)
        }
    }

    /// A streamed message's size for `-v` (`ProbeOutput.size`).
    static func size(of message: ClientConnection.StreamMessage) -> String {
        ProbeOutput.size(
            bytes: message.body.count, wireBytes: message.wireBytes, encoding: message.compressed ? "deflate" : nil)
    }

    /// A gRPC message's size for `-v` (`ProbeOutput.size`).
    static func size(of message: GRPCProbeClient.Message) -> String {
        ProbeOutput.size(bytes: message.bytes.count, wireBytes: message.wireBytes, encoding: message.encoding)
    }

    /// A response body as text (`MessagePrinter.render`).
    static func render(_ bytes: [UInt8], as type: MessageDescriptor, format: MessagePrinter) -> String {
        format.render(bytes, as: type)
    }

    static func milliseconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }
}
