// rpc-probe: see ProbeKit.RPCProbe.
import ProbeKit
import ServerApp
internal import Glibc

exit(RPCProbe.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ServerMain.processEnvironment()))
