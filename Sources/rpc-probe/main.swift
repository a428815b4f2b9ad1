// rpc-probe: see ProbeKit.RPCProbe.
import ProbeKit
import RPCPosix
internal import Glibc

exit(RPCProbe.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current()))
