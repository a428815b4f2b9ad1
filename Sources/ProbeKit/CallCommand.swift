import CommandLineSupport
import ProtoSchema
import RPCCore
import RPCPosix
import Synchronization

/// `rpc-probe HOST:PORT call METHOD -d JSON`: one call, the response as JSON.
enum CallCommand {
    static let help = """
        usage: rpc-probe [flags] HOST:PORT call METHOD [call flags]

        Calls METHOD ("pkg.Service/Method", "/pkg.Service/Method" or "pkg.Service.Method") with the
        request given as JSON and prints the response as JSON (proto3 JSON mapping: lowerCamelCase
        names, enums by name, 64-bit integers as strings, bytes as base64; proto field names and enum
        numbers are accepted on input). A server-streaming METHOD prints each message, one JSON object
        a line, until the stream ends. Unknown fields and values of the wrong type are refused, naming
        the field.

        call flags:
          -d JSON | -d @FILE | -d @-   the request (default {}); @- reads standard input
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

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        var dataArgument: String?
        var emitDefaults = false
        var emitEnvelope = false
        var compress = false
        var idempotencyKey = ""
        var requestID = ""
        guard
            let positionals = try reader.readVerb(
                "call", options: &options, help: help,
                flag: { flag, reader throws(ArgumentError) in
                    switch flag.name {
                    case "-d", "--data": dataArgument = try reader.value(for: flag).text
                    case "--emit-defaults": emitDefaults = try flag.booleanValue()
                    case "--emit-envelope": emitEnvelope = try flag.booleanValue()
                    case "--compress": compress = try flag.booleanValue()
                    case "--idempotency-key": idempotencyKey = try reader.value(for: flag).text
                    case "--request-id": requestID = try reader.value(for: flag).text
                    default: return false
                    }
                    return true
                })
        else { return 0 }
        guard positionals.count == 1, let name = positionals.first else {
            throw .usage("call: expected one METHOD (see rpc-probe call --help)")
        }
        let data = try dataArgument.map(RequestData.read) ?? "{}"

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
            let body = try session.request(data, for: method)
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
            let format = JSONFormatOptions(emitDefaults: emitDefaults, pretty: !emitEnvelope && !method.serverStreaming)
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
        format: JSONFormatOptions, verbose: Bool
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
        format: JSONFormatOptions, collect: Bool, verbose: Bool
    ) -> (responses: [String], failure: RPCError?) {
        let lines = Mutex<[String]>([])
        let output = method.outputType
        let failure = connection.streamToEnd(path: method.path, body: body, options: options) { message in
            let text = render(message.body, as: output, format: format)
            if collect { lines.withLock { $0.append(text) } } else { ProbeOutput.standardOutput(text) }
            if verbose {
                printError(
                    "message: \(message.wireBytes) bytes on the wire\(message.compressed ? " (deflate)" : ""), \(message.body.count) inflated"
                )
            }
        }
        return (lines.withLock { $0 }, failure)
    }

    /// A call over `--grpc`: a unary response, or a server stream's messages printed as they
    /// arrive (or collected for the envelope), then the final status.
    private static func grpcCall(
        _ method: MethodDescriptor, body: [UInt8], on client: GRPCProbeClient, metadata: GRPCProbeClient.Metadata,
        timeoutMs: UInt32, format: JSONFormatOptions, collect: Bool, verbose: Bool
    ) -> (responses: [String], failure: RPCError?) {
        var lines: [String] = []
        do throws(RPCError) {
            if !method.serverStreaming {
                let reply = try client.unary(path: method.path, body: body, metadata: metadata, timeoutMs: timeoutMs)
                if verbose { printError("response: \(reply.bytes.count) bytes\(wireNote(reply))") }
                return ([render(reply.bytes, as: method.outputType, format: format)], nil)
            }
            let call = try client.start(path: method.path, metadata: metadata, timeoutMs: timeoutMs)
            try client.send(call, body, end: true)
            while let message = try client.next(call) {
                let text = render(message.bytes, as: method.outputType, format: format)
                if collect { lines.append(text) } else { ProbeOutput.standardOutput(text) }
                if verbose { printError("message: \(message.bytes.count) bytes\(wireNote(message))") }
            }
            return (lines, nil)
        } catch {
            return (lines, error)
        }
    }

    /// ", N bytes on the wire (gzip)" for a compressed gRPC message, else nothing.
    static func wireNote(_ message: GRPCProbeClient.Message) -> String {
        message.encoding.map { ", \(message.wireBytes) bytes on the wire (\($0))" } ?? ""
    }

    /// A response body as JSON; a body that does not decode becomes an object saying why.
    static func render(_ bytes: [UInt8], as type: MessageDescriptor, format: JSONFormatOptions) -> String {
        do throws(ProtoSchemaError) {
            return try DynamicMessage(serializedBytes: bytes, as: type).jsonString(options: format)
        } catch {
            return
                "{\"error\":\(Logger.jsonString("the response does not decode as \(type.fullName): \(error.message)"))}"
        }
    }

    static func milliseconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }
}
