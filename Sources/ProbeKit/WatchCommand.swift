import ProtoSchema
import RPCCore
import RPCPosix

/// `rpc-probe HOST:PORT watch`: follow the event stream, one JSON object a line.
enum WatchCommand {
    static let help = """
    usage: rpc-probe [flags] HOST:PORT watch [watch flags]

    Subscribes to moderation.v1.Moderation/Subscribe and prints each event as one JSON object a
    line until the stream ends (or Ctrl-C). With no target flag it follows the acting user (--as).

    watch flags:
      --user UID          follow a user (the acting user, unless the app subscribes)
      --group GUID        follow a group (repeatable)
      --app               follow the whole app (API key only, no --as)
      --after-seq N       replay every matching action after seq N first, then go live
      --kinds K1,K2       only these actions (kicked, banned, unbanned, joined, left, added,
                          created, updated, deleted, scopeChanged, ownershipTransferred)
      --compress          ask for a deflate-compressed stream (-v shows bytes on the wire vs inflated)
      --emit-defaults     print fields at their default values too
    """

    static let method = "moderation.v1.Moderation/Subscribe"

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        var fields: [String] = []
        var guids: [String] = []
        var kinds: [String] = []
        var compress = false, emitDefaults = false
        guard let positionals = try reader.readVerb("watch", options: &options, help: help, flag: { name, inline, reader throws(ProbeError) in
            switch name {
            case "--user": fields.append("\"userUid\":\(Logger.jsonString(try reader.value(for: name, inline: inline)))")
            case "--group": guids.append(try reader.value(for: name, inline: inline))
            case "--app": fields.append("\"wholeApp\":true")
            case "--after-seq":
                let seq = try reader.value(for: name, inline: inline)
                guard UInt64(seq) != nil else { throw .usage("--after-seq: '\(seq)' is not a seq number") }
                fields.append("\"afterSeq\":\"\(seq)\"")
            case "--kinds":
                for kind in try reader.value(for: name, inline: inline).split(separator: ",") {
                    kinds.append(try actionTypeName(String(kind)))
                }
            case "--compress": compress = true
            case "--emit-defaults": emitDefaults = true
            default: return false
            }
            return true
        }) else { return 0 }
        guard positionals.isEmpty else { throw .usage("watch: unexpected argument '\(positionals[0])'") }
        if !guids.isEmpty { fields.append("\"guids\":[\(guids.map(Logger.jsonString).joined(separator: ","))]") }
        if !kinds.isEmpty { fields.append("\"actions\":[\(kinds.map { "\"\($0)\"" }.joined(separator: ","))]") }
        let session = ProbeSession(options: options)
        let subscribe = try session.method(method)
        let body = try session.request("{" + fields.joined(separator: ",") + "}", for: subscribe)
        var callOptions = options.callOptions()
        callOptions.acceptDeflate = compress
        let connection = try session.connect()
        let format = JSONFormatOptions(emitDefaults: emitDefaults, pretty: false)
        let output = subscribe.outputType
        let verbose = options.verbose
        let end = connection.streamToEnd(path: subscribe.path, body: body, options: callOptions) { message in
            ProbeOutput.standardOutput(CallCommand.render(message.body, as: output, format: format))
            if verbose {
                printError("event: \(message.wireBytes) bytes on the wire\(message.compressed ? " (deflate)" : ""), \(message.body.count) inflated")
            }
        }
        guard let end else { return 0 }
        printError(Envelope.text(end))
        return 64 + Int32(end.code.rawValue)
    }

    /// "kicked" → "ACTION_TYPE_KICKED"; full enum names pass through.
    static func actionTypeName(_ kind: String) throws(ProbeError) -> String {
        let known = ["created", "updated", "deleted", "joined", "left", "added", "kicked", "banned", "unbanned",
                     "scopeChanged", "ownershipTransferred"]
        if kind.hasPrefix("ACTION_TYPE_") { return kind }
        guard known.contains(kind) else { throw .usage("--kinds: '\(kind)' is not one of \(known.joined(separator: ", "))") }
        var snake = ""
        for character in kind {
            if character.isUppercase { snake += "_" }
            snake += character.uppercased()
        }
        return "ACTION_TYPE_" + snake
    }
}
