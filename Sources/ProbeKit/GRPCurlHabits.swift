/// grpcurl's flags that rpc-probe does not take, each with what to type instead — so that a habit
/// that cannot be honoured ends in advice rather than a bare "unknown flag".
///
/// The grpcurl flags that do make sense here are rpc-probe's own (see `ProbeOptions.flags` and
/// the verbs' tables): `-d`, `-H`, `-plaintext`, `-max-time`, `-connect-timeout`, `-max-msg-sz`,
/// `-emit-defaults`, `-format`, `-protoset`, `-proto`, `-import-path`, `-cacert`, `-cert`,
/// `-key`, `-servername`, `-v`. docs/RPC-PROBE.md ("grpcurl habits") lists both.
///
/// One name is taken by a verb with another tool's meaning: `bench --insecure` is ghz's
/// plaintext. The other verbs keep the grpcurl advice for it, and say where it does work.
enum GRPCurlHabits {
    /// Names in their `--` form (the `.go` reading turns `-insecure` into `--insecure`).
    static let insteads: [String: String] = [
        "--insecure":
            "use --tls-insecure-skip-verify (for tests only: nothing about the server's certificate is checked); "
            + "bench takes --insecure as ghz does, meaning plaintext",
        "--authority": "rpc-probe sends HOST:PORT as the authority; --servername NAME sets the name TLS checks",
        "--rpc-header": "use -H 'key: value' (sent with every call, reflection included)",
        "--reflect-header": "use -H 'key: value' (sent with every call, reflection included)",
        "--vv": "use -v",
        "--use-reflection": "reflection is used unless --protoset or -proto gives the schema",
        "--protoset-out": "save the schema with the protoset verb: rpc-probe HOST:PORT protoset -o FILE",
        "--msg-template": "describe the request message to see its fields: rpc-probe HOST:PORT describe pkg.Request",
        "--format-error": "--emit-envelope prints the status with the response as one JSON object",
        "--allow-unknown-fields":
            "rpc-probe refuses an unknown field, naming the closest known one; correct or drop it",
        "--keepalive-time": "not needed: rpc-probe makes its calls and exits",
        "--user-agent": "rpc-probe names itself (rpc-probe) to the server",
        "--unix": "rpc-probe connects over TCP: give HOST:PORT",
        "--alts": "use --tls (with --cacert, --cert and --key)",
        "--expand-headers": "-H values are sent as given",
    ]

    /// "; NAME is grpcurl's: …" for a grpcurl flag rpc-probe does not take, else "".
    static func advice(for name: String) -> String {
        insteads[name].map { ": a grpcurl flag rpc-probe does not take; \($0)" } ?? ""
    }
}
