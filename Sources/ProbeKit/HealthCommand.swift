import CommandLineSupport
import GRPCMessages
import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix

/// `rpc-probe HOST:PORT health [SERVICE]`: the server's (or a service's) serving status.
enum HealthCommand: ProbeVerb {
    static let name = "health"

    static let help = """
        usage: rpc-probe [flags] HOST:PORT health [SERVICE]

        Calls mrpc.health.v1.Health/Check (no reflection needed) and prints
        {"status":"SERVING_STATUS_…"}. Exits 0 when SERVING, else 78 (64 + UNAVAILABLE): a draining
        server is NOT_SERVING, an unknown SERVICE is SERVICE_UNKNOWN. With --grpc, calls
        grpc.health.v1.Health/Check and prints {"status":"SERVING"}; an unknown SERVICE is the
        NOT_FOUND status of that service (exit 69).
        """

    static func run(_ flags: NoFlags, arguments positionals: [String], options: ProbeOptions) throws(ProbeError)
        -> Int32
    {
        guard positionals.count <= 1 else {
            throw .usage("health: expected at most one SERVICE (see rpc-probe health --help)")
        }
        let session = ProbeSession(options: options)
        if options.grpc { return try grpcCheck(positionals.first ?? "", session: session) }
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

    /// `grpc.health.v1.Health/Check` over `--grpc`: `{"status":"SERVING"}` (that enum's names),
    /// exit 0 when SERVING, else 78; an unknown SERVICE is the NOT_FOUND status the standard
    /// health service answers (exit 69).
    private static func grpcCheck(_ service: String, session: ProbeSession) throws(ProbeError) -> Int32 {
        let client = try session.connectGRPC()
        let response: Grpc_Health_V1_HealthCheckResponse
        do throws(RPCError) {
            let reply = try client.unary(
                path: Grpc_Health_V1_HealthMethods.check.path,
                body: Grpc_Health_V1_HealthCheckRequest(service: service).serializedBytes(),
                metadata: session.options.grpcMetadata(), timeoutMs: session.options.callOptions().timeoutMs)
            do throws(ProtoDecodingError) {
                response = try Grpc_Health_V1_HealthCheckResponse(serializedBytes: reply.bytes)
            } catch {
                throw RPCError.internal("the server sent an \(error.description)")
            }
        } catch {
            throw .call(error)
        }
        ProbeOutput.standardOutput(
            "{\"status\":\"\(response.status.protoValueName ?? String(response.status.rawValue))\"}")
        return response.status == .serving ? 0 : ProbeError.exitCode(for: .unavailable("not serving"))
    }
}
