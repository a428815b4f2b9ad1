internal import Glibc
// rpc-probe: see ProbeKit.RPCProbe.
import ProbeKit
import RPCPosix

exit(RPCProbe.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current()))
