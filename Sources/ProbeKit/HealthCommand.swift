import CommandLineSupport
import RPCCore
import RPCMessages
import RPCPosix

/// `rpc-probe HOST:PORT health [SERVICE]`: the server's (or a service's) serving status.
enum HealthCommand {
    static let help = """
        usage: rpc-probe [flags] HOST:PORT health [SERVICE]

        Calls mrpc.health.v1.Health/Check (no reflection needed) and prints
        {"status":"SERVING_STATUS_…"}. Exits 0 when SERVING, else 78 (64 + UNAVAILABLE): a draining
        server is NOT_SERVING, an unknown SERVICE is SERVICE_UNKNOWN.
        """

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        guard let positionals = try reader.readVerb("health", options: &options, help: help) else { return 0 }
        guard positionals.count <= 1 else {
            throw .usage("health: expected at most one SERVICE (see rpc-probe health --help)")
        }
        let session = ProbeSession(options: options)
        let connection = try session.connect()
        let response: HealthCheckResponse
        do throws(RPCError) {
            response = try connection.unary(
                HealthMethods.check, HealthCheckRequest(service: positionals.first ?? ""),
                options: options.callOptions())
        } catch {
            throw .call(error)
        }
        ProbeOutput.standardOutput(
            "{\"status\":\"\(response.status.protoValueName ?? String(response.status.rawValue))\"}")
        return response.status == .serving ? 0 : ProbeError.exitCode(for: .unavailable("not serving"))
    }
}
