import TestSupport
import Testing

/// The command line itself: --help for rpc-probe and every verb, `help VERB`, usage errors (exit
/// 2), and `health`.
@Suite("rpc-probe: help, usage errors, health")
struct ProbeUsageTests {
    static let verbs = ["list", "describe", "call", "watch", "bench", "health", "protoset"]

    @Test("rpc-probe --help lists every verb, the shared flags and the exit codes")
    func mainHelp() throws {
        let offline = ProbeRunner(address: nil, apiKey: nil)
        for arguments in [["--help"], ["-h"], ["help"]] {
            let outcome = try offline.run(arguments)
            #expect(outcome.isCleanSuccess, "\(outcome)")
            #expect(outcome.standardOutput.hasPrefix("usage: rpc-probe [flags] HOST:PORT VERB [arguments]"))
            for verb in Self.verbs { #expect(outcome.standardOutput.contains("\n  \(verb) "), "\(verb) in --help") }
            for flag in [
                "--api-key", "--as", "-H key=value", "--timeout", "--connect-timeout", "--max-msg-bytes", "--protoset",
                "-v",
            ] {
                #expect(outcome.standardOutput.contains(flag), "\(flag) in --help")
            }
            #expect(outcome.standardOutput.contains("64 + the status code"))
        }
    }

    @Test(
        "every verb has --help (with or without an address) and help VERB, each with the shared flags", arguments: verbs
    )
    func verbHelp(_ verb: String) throws {
        let withAddress = try ProbeRunner(address: "127.0.0.1:1", apiKey: nil).run(verb, "--help")
        #expect(withAddress.isCleanSuccess, "nothing is contacted for --help: \(withAddress)")
        #expect(withAddress.standardOutput.hasPrefix("usage: rpc-probe [flags] HOST:PORT \(verb)"), "\(withAddress)")
        #expect(withAddress.standardOutput.contains("shared flags (anywhere: before the address, after the verb"))
        let offline = ProbeRunner(address: nil, apiKey: nil)
        #expect(try offline.run(verb, "-h").standardOutput == withAddress.standardOutput)
        #expect(try offline.run("help", verb).standardOutput == withAddress.standardOutput)
    }

    @Test(
        "usage errors exit 2 and say what is wrong",
        arguments: [
            ([String](), "missing HOST:PORT and VERB"),
            (["127.0.0.1:7600"], "missing VERB"),
            (["127.0.0.1:7600", "fly"], "unknown verb 'fly'"),
            (["--nope", "127.0.0.1:7600", "list"], "unknown flag --nope"),
            (["127.0.0.1:7600", "call", "--nope"], "call: unknown flag --nope (see rpc-probe call --help)"),
            (["127.0.0.1:7600", "call"], "call: expected one METHOD"),
            (["127.0.0.1:7600", "call", "a", "b"], "call: expected one METHOD"),
            (["127.0.0.1:7600", "call", "x.Y/Z", "-d"], "-d needs a value"),
            (["127.0.0.1:7600", "--timeout", "soon", "health"], "--timeout: 'soon' is not a duration"),
            (["127.0.0.1:7600", "-H", "novalue", "health"], "-H: expected key=value or 'key: value', got 'novalue'"),
            (["127.0.0.1:7600", "--connect-timeout", "0", "health"], "--connect-timeout: must be at least 1ms"),
            (["localhost", "health"], "'localhost' is not HOST:PORT"),
            (["127.0.0.1:7600", "watch", "--after-seq", "-1"], "--after-seq: '-1' is not a seq number"),
            (["127.0.0.1:7600", "watch", "--kinds", "ki-cked"], "--kinds: 'ki-cked' is not an action name"),
            (["127.0.0.1:7600", "watch", "extra"], "watch: unexpected argument 'extra'"),
            (["127.0.0.1:7600", "list", "a", "b"], "list: expected at most one SERVICE"),
            (["127.0.0.1:7600", "protoset", "extra"], "protoset: unexpected argument 'extra'"),
            (["help", "fly"], "help: no verb 'fly'"),
        ])
    func usageErrors(arguments: [String], message: String) throws {
        let outcome = try ProbeRunner(address: nil, apiKey: nil).run(arguments)
        #expect(outcome.exitCode == 2, "\(outcome)")
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError.contains(message), "\(outcome)")
    }

    @Test("health prints the serving status and exits 0; an unknown service is SERVICE_UNKNOWN and exits 78")
    func health() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let serving = try probe.run("health")
        #expect(serving.isCleanSuccess, "\(serving)")
        #expect(try JSON(parsing: serving.standardOutput)["status"].string == "SERVING_STATUS_SERVING")
        let known = try probe.run("health", "moderation.v1.Moderation")
        #expect(known.exitCode == 0, "\(known)")
        let unknown = try probe.run("health", "moderation.v9.Nope")
        #expect(unknown.exitCode == 64 + 14, "\(unknown)")
        #expect(try JSON(parsing: unknown.standardOutput)["status"].string == "SERVING_STATUS_SERVICE_UNKNOWN")
    }
}
