import CommandLineSupport
import ProtoSchema
import RPCCore
import RPCPosix
import Synchronization

/// `rpc-probe HOST:PORT watch`: follow the event stream, one JSON object a line.
enum WatchCommand: ProbeVerb {
    static let name = "watch"

    static let help = """
        usage: rpc-probe [flags] HOST:PORT watch [watch flags]

        Subscribes to moderation.v1.Moderation/Subscribe and prints each event (a SubscribeResponse)
        as one JSON object a line, as it arrives, until the stream ends, --count events have arrived,
        the --timeout passes, or Ctrl-C. With no --user, --group or --app it follows the acting user
        (--as UID); one of the four is needed.

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
          --format json|text  each event as a line of JSON (default) or of protobuf's text format

        Once the subscription is registered, the server says so in the stream's first message
        (not printed as an event): every matching action committed from then on is printed. With -v,
        watch prints "live after seq N" on standard error then (with the replay's range when
        --after-seq replays).

        The stream ending with an error (e.g. PERMISSION_DENIED, or UNAVAILABLE with details.last_seq
        when the server shuts down) prints the status on standard error and exits 64 + its code.
        """

    static let method = "moderation.v1.Moderation/Subscribe"

    /// What the watch flags set: the subscription's target and filters, and the output.
    struct Flags {
        var user: String?
        var guids: [String] = []
        var wholeApp = false
        var afterSeq: String?
        var kinds: [String] = []
        var limit: Int?
        var compress = false
        var emitDefaults = false
        var format = MessageFormat.json
    }

    static let defaults = Flags()

    static let flags: [ProbeFlag<Flags>] = [
        ProbeFlag("--user") { flags, value in flags.user = value.text },
        ProbeFlag("--group") { flags, value throws(ArgumentError) in
            let list = value.text.split(separator: ",").map(String.init)
            guard !list.isEmpty else { throw value.error("expected a GUID") }
            flags.guids += list
        },
        ProbeFlag("--app") { flags, on in flags.wholeApp = on },
        ProbeFlag("--after-seq") { flags, seq throws(ArgumentError) in
            guard UInt64(seq.text) != nil else { throw seq.error("'\(seq.text)' is not a seq number") }
            flags.afterSeq = seq.text
        },
        ProbeFlag("--kinds") { flags, value throws(ArgumentError) in
            for kind in value.text.split(separator: ",") {
                guard kind.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw value.error("'\(kind)' is not an action name")
                }
                flags.kinds.append(String(kind))
            }
        },
        ProbeFlag("--count") { flags, value throws(ArgumentError) in
            flags.limit = try value.integer(in: 1...Int(Int32.max))
        },
        ProbeFlag("--compress") { flags, on in flags.compress = on },
        ProbeFlag("--emit-defaults") { flags, on in flags.emitDefaults = on },
        ProbeFlag("--format") { flags, value throws(ArgumentError) in flags.format = try MessageFormat(value) },
    ]

    static func run(_ flags: Flags, arguments positionals: [String], options: ProbeOptions) throws(ProbeError)
        -> Int32
    {
        guard positionals.isEmpty else {
            throw .usage("watch: unexpected argument '\(positionals[0])' (see rpc-probe watch --help)")
        }
        // The server refuses a subscription without a target, naming its proto fields; say it
        // in this command's words before connecting.
        guard flags.user != nil || !flags.guids.isEmpty || flags.wholeApp || !options.onBehalfOf.isEmpty else {
            throw .usage(
                "watch: nothing to follow: give --user UID, --group GUID or --app (the whole app), "
                    + "or --as UID to follow that user (see rpc-probe watch --help)")
        }
        var fields: [String] = []
        if let user = flags.user { fields.append("\"userUid\":\(Logger.jsonString(user))") }
        if !flags.guids.isEmpty {
            fields.append("\"guids\":[\(flags.guids.map(Logger.jsonString).joined(separator: ","))]")
        }
        if flags.wholeApp { fields.append("\"wholeApp\":true") }
        if let afterSeq = flags.afterSeq { fields.append("\"afterSeq\":\"\(afterSeq)\"") }
        let limit = flags.limit
        let compress = flags.compress
        let emitDefaults = flags.emitDefaults

        let session = ProbeSession(options: options)
        let subscribe = try session.method(method)
        if !flags.kinds.isEmpty {
            let names = try actionTypeNames(flags.kinds, of: subscribe)
            fields.append("\"actions\":[\(names.map { "\"\($0)\"" }.joined(separator: ","))]")
        }
        let body = try session.request("{" + fields.joined(separator: ",") + "}", for: subscribe)
        let format = MessagePrinter(format: flags.format, emitDefaults: emitDefaults, pretty: false)
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
                totals.compressed = totals.compressed || message.compressed
                return totals.events
            }
            guard let number else { return }
            if number == 1, let live = liveLine(message.body, as: output) {
                // Not an event: its bytes are not the events' either.
                totals.withLock { totals in
                    totals = Totals()
                }
                if verbose { printError(live) }
                return
            }
            ProbeOutput.standardOutput(CallCommand.render(message.body, as: output, format: format))
            if verbose { printError("event \(number): \(CallCommand.size(of: message))") }
            if let maxEvents, number == maxEvents { connection.cancel(streamID: message.streamID) }
        }
        let seen = totals.withLock { $0 }
        if verbose { printError(seen.summary) }
        guard let end else { return 0 }
        if let limit, seen.events == limit, end.code == .cancelled { return 0 }
        printError(Envelope.text(end))
        return ProbeError.exitCode(for: end)
    }

    /// The watch over `--grpc`: the same output, exit codes and `-v` lines; `--count` cancels
    /// the stream (RST_STREAM CANCEL) once reached.
    private static func grpcWatch(
        _ subscribe: MethodDescriptor, body: [UInt8], session: ProbeSession, compress: Bool,
        format: MessagePrinter, limit: Int?
    ) throws(ProbeError) -> Int32 {
        let options = session.options
        let client = try session.connectGRPC()
        var metadata = options.grpcMetadata()
        metadata.acceptCompressed = compress
        var seen = Totals()
        defer { if options.verbose { printError(seen.summary) } }
        do throws(RPCError) {
            let call = try client.start(
                path: subscribe.path, metadata: metadata, timeoutMs: options.callOptions().timeoutMs)
            try client.send(call, body, end: true)
            var first = true
            while let message = try client.next(call) {
                defer { first = false }
                if first, let live = liveLine(message.bytes, as: subscribe.outputType) {
                    if options.verbose { printError(live) }
                    continue
                }
                seen.events += 1
                seen.wireBytes += message.wireBytes
                seen.inflatedBytes += message.bytes.count
                seen.compressed = seen.compressed || message.encoding != nil
                ProbeOutput.standardOutput(CallCommand.render(message.bytes, as: subscribe.outputType, format: format))
                if options.verbose { printError("event \(seen.events): \(CallCommand.size(of: message))") }
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

    /// The line for a stream's first message when it is the server's `started` message (older
    /// servers send none): where delivery begins, and the replay's range when there is one.
    static func liveLine(_ body: [UInt8], as type: MessageDescriptor) -> String? {
        guard
            let message = try? body.withUnsafeBytes({ raw throws(ProtoSchemaError) in
                try DynamicMessage(serializedBytes: raw, as: type)
            }),
            case .message(let started)? = message["started"]
        else { return nil }
        var afterSeq: UInt64 = 0
        var headSeq: UInt64 = 0
        if case .uint64(let seq)? = started["after_seq"] { afterSeq = seq }
        if case .uint64(let seq)? = started["head_seq"] { headSeq = seq }
        return headSeq > afterSeq
            ? "live after seq \(afterSeq) (replaying \(afterSeq + 1)–\(headSeq) first)" : "live after seq \(afterSeq)"
    }

    private struct Totals {
        var events = 0
        var wireBytes = 0
        var inflatedBytes = 0
        /// Whether any event came compressed (else wire and inflated bytes are the same).
        var compressed = false

        /// The `-v` line after the last event.
        var summary: String {
            "\(events) event(s): "
                + (compressed ? "\(wireBytes) bytes on the wire, \(inflatedBytes) inflated" : "\(inflatedBytes) bytes")
        }
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
