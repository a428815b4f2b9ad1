internal import Glibc
// moderation-server: parses its settings and runs the service (see ServerApp.ServerMain).
import RPCPosix
import ServerApp

exit(ServerMain.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current()))
