import RPCCore
import RPCPosix

extension ClientConnection {
    /// Connects for rpc-probe, turning a failure into the probe's error.
    static func probeConnect(_ options: ClientOptions) throws(ProbeError) -> ClientConnection {
        do throws(RPCError) {
            return try ClientConnection.connect(options)
        } catch {
            throw .call(error)
        }
    }
}
