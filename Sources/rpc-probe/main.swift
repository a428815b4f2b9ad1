// rpc-probe: see ProbeKit.RPCProbe.
import ProbeKit
internal import Glibc

exit(RPCProbe.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current()))
