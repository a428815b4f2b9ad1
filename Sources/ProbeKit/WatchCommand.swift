import CommandLineSupport
import ProtoSchema
import RPCCore
import RPCPosix
import Synchronization

/// `rpc-probe HOST:PORT watch`: follow the event stream, one JSON object a line.
enum WatchCommand {
    static let help = """
        usage: rpc-probe [flags] HOST:PORT watch [watch flags]

        Subscribes to moderation.v1.Moderation/Subscribe and prints each event (a SubscribeResponse)
        as one JSON object a line, as it arrives, until the stream ends, --count events have arrived,
        the --timeout passes, or Ctrl-C. With no --user, --group or --app it follows the acting user
        (--as UID).

        watch flags:
          --user UID          follow a user: their groups' actions and actions on them (the acting
                              user, unless the app subscribes)
          --group GUID        follow a group (repeatable, or GUID,GUID,…); the acting user must be a member
          --app               follow the whole app (API key only, no --as)
          --after-seq N       replay every matching action after seq N first, then go live
                              (default: live from now)
          --kinds K1,K2       only these actions: values of the server's moderation.v1.ActionType,
                              as the seeds name them (kicked, banned, muted, scopeChanged, …)
                              or in full (ACTION_TYPE_KICKED)
          --count N           stop after N events (exit 0)
          --compress          ask for a deflate-compressed stream; -v shows each event's bytes on
                              the wire vs inflated, and the totals at the end
          --emit-defaults     print fields at their default values too

        The stream ending with an error (e.g. PERMISSION_DENIED, or UNAVAILABLE with details.last_seq
        when the server shuts down) prints the status on standard error and exits 64 + its code.
        """

    static let method = "moderation.v1.Moderation/Subscribe"

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        var fields: [String] = []
        var guids: [String] = []
        var kinds: [String] = []
        var limit: Int?
        var compress = false
        var emitDefaults = false
        guard
            let positionals = try reader.readVerb(
                "watch", options: &options, help: help,
                flag: { flag, reader throws(ArgumentError) in
                    switch flag.name {
                    case "--user": fields.append("\"userUid\":\(Logger.jsonString(try reader.value(for: flag).text))")
                    case "--group":
                        let value = try reader.value(for: flag)
                        let list = value.text.split(separator: ",").map(String.init)
                        guard !list.isEmpty else { throw value.error("expected a GUID") }
                        guids += list
                    case "--app": if try flag.booleanValue() { fields.append("\"wholeApp\":true") }
                    case "--after-seq":
                        let seq = try reader.value(for: flag)
                        guard UInt64(seq.text) != nil else { throw seq.error("'\(seq.text)' is not a seq number") }
                        fields.append("\"afterSeq\":\"\(seq.text)\"")
                    case "--kinds":
                        let value = try reader.value(for: flag)
                        for kind in value.text.split(separator: ",") {
                            guard kind.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                                throw value.error("'\(kind)' is not an action name")
                            }
                            kinds.append(String(kind))
                        }
                    case "--count": limit = try reader.value(for: flag).integer(in: 1...Int(Int32.max))
                    case "--compress": compress = try flag.booleanValue()
                    case "--emit-defaults": emitDefaults = try flag.booleanValue()
                    default: return false
                    }
                    return true
                })
        else { return 0 }
        guard positionals.isEmpty else {
            throw .usage("watch: unexpected argument '\(positionals[0])' (see rpc-probe watch --help)")
        }
        if !guids.isEmpty { fields.append("\"guids\":[\(guids.map(Logger.jsonString).joined(separator: ","))]") }

        let session = ProbeSession(options: options)
        let subscribe = try session.method(method)
        if !kinds.isEmpty {
            let names = try actionTypeNames(kinds, of: subscribe)
            fields.append("\"actions\":[\(names.map { "\"\($0)\"" }.joined(separator: ","))]")
        }
        let body = try session.request("{" + fields.joined(separator: ",") + "}", for: subscribe)
        let format = JSONFormatOptions(emitDefaults: emitDefaults, pretty: false)
        if options.grpc {
            return try grpcWatch(
                subscribe, body: body, session: session, compress: compress, format: format, limit: limit)
        }
        var callOptions = options.callOptions()
        callOptions.acceptDeflate = compress
        let connection = try session.connect()
        let output = subscribe.outputType
        let verbose = options.verbose
        let maxEvents = limit
        let totals = Mutex(Totals())
        let end = connection.streamToEnd(path: subscribe.path, body: body, options: callOptions) { message in
            // Messages already read when the stream is cancelled at --count are dropped here.
            let number: Int? = totals.withLock { totals in
                if let maxEvents, totals.events >= maxEvents { return nil }
                totals.events += 1
                totals.wireBytes += message.wireBytes
                totals.inflatedBytes += message.body.count
                return totals.events
            }
            guard let number else { return }
            ProbeOutput.standardOutput(CallCommand.render(message.body, as: output, format: format))
            if verbose {
                printError(
                    "event \(number): \(message.wireBytes) bytes on the wire\(message.compressed ? " (deflate)" : ""), \(message.body.count) inflated"
                )
            }
            if let maxEvents, number == maxEvents { connection.cancel(streamID: message.streamID) }
        }
        let seen = totals.withLock { $0 }
        if verbose {
            printError("\(seen.events) event(s): \(seen.wireBytes) bytes on the wire, \(seen.inflatedBytes) inflated")
        }
        guard let end else { return 0 }
        if let limit, seen.events == limit, end.code == .cancelled { return 0 }
        printError(Envelope.text(end))
        return ProbeError.exitCode(for: end)
    }

    /// The watch over `--grpc`: the same output, exit codes and `-v` lines; `--count` cancels
    /// the stream (RST_STREAM CANCEL) once reached.
    private static func grpcWatch(
        _ subscribe: MethodDescriptor, body: [UInt8], session: ProbeSession, compress: Bool,
        format: JSONFormatOptions, limit: Int?
    ) throws(ProbeError) -> Int32 {
        let options = session.options
        let client = try session.connectGRPC()
        var metadata = options.grpcMetadata()
        metadata.acceptCompressed = compress
        var seen = Totals()
        defer {
            if options.verbose {
                printError(
                    "\(seen.events) event(s): \(seen.wireBytes) bytes on the wire, \(seen.inflatedBytes) inflated")
            }
        }
        do throws(RPCError) {
            let call = try client.start(
                path: subscribe.path, metadata: metadata, timeoutMs: options.callOptions().timeoutMs)
            try client.send(call, body, end: true)
            while let message = try client.next(call) {
                seen.events += 1
                seen.wireBytes += message.wireBytes
                seen.inflatedBytes += message.bytes.count
                ProbeOutput.standardOutput(CallCommand.render(message.bytes, as: subscribe.outputType, format: format))
                if options.verbose {
                    printError(
                        "event \(seen.events): \(message.wireBytes) bytes on the wire"
                            + (message.encoding.map { " (\($0))" } ?? "") + ", \(message.bytes.count) inflated")
                }
                if let limit, seen.events == limit {
                    client.cancel(call)
                    return 0
                }
            }
            return 0
        } catch {
            printError(Envelope.text(error))
            return ProbeError.exitCode(for: error)
        }
    }

    private struct Totals {
        var events = 0
        var wireBytes = 0
        var inflatedBytes = 0
    }

    /// The `ActionType` value names of `kinds` ("kicked" → "ACTION_TYPE_KICKED"; full names pass
    /// through), checked against the enum of the Subscribe request's `actions` field in the schema
    /// the server gave: kinds a newer server adds are known without a new rpc-probe.
    /// - Throws: a usage error naming the kinds the schema has, for a kind it does not.
    static func actionTypeNames(_ kinds: [String], of subscribe: MethodDescriptor) throws(ProbeError) -> [String] {
        guard let actionType = subscribe.inputType.fields.first(where: { $0.name == "actions" })?.enumType else {
            throw .failure("\(subscribe.inputType.fullName) has no enum field \"actions\" to filter by")
        }
        let prefix = "ACTION_TYPE_"
        let known = actionType.values.map(\.name).filter { $0.hasPrefix(prefix) && $0 != prefix + "UNSPECIFIED" }
        return try kinds.map { (kind: String) throws(ProbeError) -> String in
            let name = kind.hasPrefix(prefix) ? kind : prefix + snakeCase(kind)
            guard known.contains(name) else {
                let short = known.map { lowerCamelCase(String($0.dropFirst(prefix.count))) }
                throw .usage("--kinds: '\(kind)' is not one of \(short.joined(separator: ", "))")
            }
            return name
        }
    }

    /// "scopeChanged" → "SCOPE_CHANGED".
    static func snakeCase(_ word: String) -> String {
        var snake = ""
        for character in word {
            if character.isUppercase && !snake.isEmpty { snake += "_" }
            snake += character.uppercased()
        }
        return snake
    }

    /// "SCOPE_CHANGED" → "scopeChanged".
    static func lowerCamelCase(_ snake: String) -> String {
        let words = snake.lowercased().split(separator: "_")
        return words.enumerated().map { index, word in
            index == 0 ? String(word) : word.prefix(1).uppercased() + word.dropFirst()
        }.joined()
    }
}
