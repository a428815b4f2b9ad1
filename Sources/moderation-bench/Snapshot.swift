internal import Glibc

/// The `--snapshot-command` of the wire benchmark: a shell command run as `CMD before PHASE` just
/// before a measured phase and `CMD after PHASE` just after it, so that a driver script can read
/// figures the benchmark cannot see (the database's CPU time, its WAL counters) over exactly the
/// measured window. Its output goes to the benchmark's; nothing when no command was given.
struct Snapshot {
    let command: String?

    func take(_ moment: String, _ phase: String) {
        guard let command else { return }
        fflush(nil)
        _ = "\(command) \(moment) \(phase)".withCString { system($0) }
    }
}
