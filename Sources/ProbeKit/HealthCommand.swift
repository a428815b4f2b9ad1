import RPCCore
import RPCMessages
import RPCPosix

/// `rpc-probe HOST:PORT health [SERVICE]`: the server's (or a service's) serving status.
enum HealthCommand {
    static let help = """
    usage: rpc-probe [flags] HOST:PORT health [SERVICE]

    Prints {"status": "SERVING_STATUS_…"}; exits 0 when SERVING, else 64 + 14 (UNAVAILABLE).
    """

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        var service = ""
        while !reader.isEmpty {
            if let (name, inline) = reader.flag() {
                if try options.accept(name, inline: inline, from: &reader) { continue }
                if name == "--help" || name == "-h" {
                    print(help)
                    return 0
                }
                throw .usage("health: unknown flag \(name)")
            } else if let positional = reader.positional() {
                service = positional
            }
        }
        let connection = try ClientConnection.probeConnect(try options.clientOptions())
        defer { connection.close() }
        let response: HealthCheckResponse
        do throws(RPCError) {
            response = try connection.unary(HealthService.check, HealthCheckRequest(service: service), options: options.callOptions())
        } catch {
            throw .call(error)
        }
        print("{\"status\": \"\(response.status.protoValueName ?? String(response.status.rawValue))\"}")
        return response.status == .serving ? 0 : 64 + Int32(StatusCode.unavailable.rawValue)
    }
}
