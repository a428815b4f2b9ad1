import Testing

/// The service tests, one test at a time: each starts a real server (event loops, workers, the
/// store's writer — a child process for the SIGKILL test), and several measure latency,
/// throughput or memory, which tests running beside them on a small machine would disturb.
@Suite(.serialized)
enum EndToEnd {}
