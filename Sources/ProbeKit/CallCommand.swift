import ProtoSchema
import RPCCore
import RPCPosix
import Synchronization

/// `rpc-probe HOST:PORT call METHOD -d JSON`: one call, the response as JSON.
enum CallCommand {
    static let help = """
    usage: rpc-probe [flags] HOST:PORT call METHOD [call flags]

    Calls METHOD with the request given as JSON (proto3 JSON mapping: lowerCamelCase or proto
    field names, enums by name, 64-bit integers as strings, bytes as base64) and prints the
    response as JSON; a server-streaming METHOD prints each message until the stream ends.

    call flags:
      -d JSON | -d @FILE | -d @-   the request (default {})
      --emit-defaults              print fields at their default values too
      --emit-envelope              print one JSON object with the status (code, name, ERR_ code,
                                   message, details), the response(s) and the timing
      --idempotency-key KEY        CallHeader.idempotency_key
      --request-id ID              CallHeader.request_id
      --compress                   ask for a deflate-compressed response/stream

    A failed call prints the status to standard error and exits with 64 + the status code.
    """

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        var data = "{}"
        var emitDefaults = false, envelope = false, compress = false
        var idempotencyKey = "", requestID = ""
        guard let positionals = try reader.readVerb("call", options: &options, help: help, flag: { name, inline, reader throws(ProbeError) in
            switch name {
            case "-d", "--data": data = try RequestData.read(try reader.value(for: name, inline: inline))
            case "--emit-defaults": emitDefaults = true
            case "--emit-envelope": envelope = true
            case "--compress": compress = true
            case "--idempotency-key": idempotencyKey = try reader.value(for: name, inline: inline)
            case "--request-id": requestID = try reader.value(for: name, inline: inline)
            default: return false
            }
            return true
        }) else { return 0 }
        guard positionals.count == 1, let name = positionals.first else { throw .usage("call: expected one METHOD (see call --help)") }
        let session = ProbeSession(options: options)
        let method = try session.method(name)
        let body = try session.request(data, for: method)
        var callOptions = options.callOptions()
        callOptions.idempotencyKey = idempotencyKey
        callOptions.requestID = requestID
        callOptions.acceptDeflate = compress
        let connection = try session.connect()
        let format = JSONFormatOptions(emitDefaults: emitDefaults, pretty: !envelope)
        let started = monotonicNow()
        if options.verbose {
            printError("calling \(method.path) (request \(body.count) bytes, on behalf of \(options.onBehalfOf.isEmpty ? "the app" : options.onBehalfOf))")
        }

        var responses: [String] = []
        let failure: RPCError?
        if method.serverStreaming {
            let lines = Mutex<[String]>([])
            let output = method.outputType
            let collect = envelope, verbose = options.verbose
            failure = connection.streamToEnd(path: method.path, body: body, options: callOptions) { message in
                let text = Self.render(message.body, as: output, format: format)
                if collect { lines.withLock { $0.append(text) } } else { ProbeOutput.standardOutput(text) }
                if verbose { printError("message: \(message.wireBytes) bytes on the wire, \(message.body.count) inflated") }
            }
            responses = lines.withLock { $0 }
        } else {
            do throws(RPCError) {
                let reply = try connection.call(path: method.path, body: body, options: callOptions)
                let text = render(reply, as: method.outputType, format: format)
                if envelope { responses = [text] } else { print(text) }
                failure = nil
            } catch {
                failure = error
            }
        }
        let elapsed = Double(monotonicNow() - started) / 1e6
        if envelope {
            print(Envelope.json(method: method, failure: failure, responses: responses, streaming: method.serverStreaming, elapsedMs: elapsed))
        } else if let failure {
            printError(Envelope.text(failure))
        }
        if options.verbose { printError("took \(BenchReport.fixed(elapsed, 3)) ms") }
        return failure.map { 64 + Int32($0.code.rawValue) } ?? 0
    }

    static func render(_ bytes: [UInt8], as type: MessageDescriptor, format: JSONFormatOptions) -> String {
        do throws(ProtoSchemaError) {
            return try DynamicMessage(serializedBytes: bytes, as: type).jsonString(options: format)
        } catch {
            return "{\"error\":\(Logger.jsonString("the response does not decode as \(type.fullName): \(error.message)"))}"
        }
    }
}

/// Text and JSON forms of a call's outcome.
enum Envelope {
    static func text(_ error: RPCError) -> String {
        var lines = ["ERROR:", "  Code: \(error.code.name) (\(error.code.rawValue))"]
        if !error.errorCode.isEmpty { lines.append("  Error code: \(error.errorCode)") }
        lines.append("  Message: \(error.message)")
        for key in error.details.keys.sorted() { lines.append("  Detail: \(key)=\(error.details[key]!)") }
        return lines.joined(separator: "\n")
    }

    static func json(method: MethodDescriptor, failure: RPCError?, responses: [String], streaming: Bool, elapsedMs: Double) -> String {
        let error = failure ?? RPCError(code: .ok, errorCode: "", message: "")
        let details = error.details.keys.sorted().map { "\(Logger.jsonString($0)):\(Logger.jsonString(error.details[$0]!))" }
        let status = "{\"code\":\(error.code.rawValue),\"codeName\":\"\(error.code.name)\",\"errorCode\":\(Logger.jsonString(error.errorCode)),"
            + "\"message\":\(Logger.jsonString(error.message)),\"details\":{\(details.joined(separator: ","))}}"
        let body = streaming
            ? "\"messages\":[\(responses.joined(separator: ","))]"
            : "\"response\":\(responses.first ?? "null")"
        return "{\"method\":\(Logger.jsonString(method.path)),\"status\":\(status),\(body),\"timing\":{\"totalMs\":\(BenchReport.fixed(elapsedMs, 3))}}"
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    ProbeOutput.standardError(message)
}
