internal import Glibc
// rpc-probe: see ProbeKit.RPCProbe.
import ProbeKit
import RPCPosix

let status = RPCProbe.main(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current())
// `_exit`, not `exit`: a connection's reader thread may still be inside OpenSSL, and `exit` runs
// OpenSSL's atexit cleanup beneath it (rpc-probe crashed with SIGSEGV at exit now and then after
// a TLS call). The output is written with write(2); stdio is flushed (all streams) for anything else.
fflush(nil)
_exit(status)
