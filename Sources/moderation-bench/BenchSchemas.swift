internal import Glibc

/// The PostgreSQL schemas a wire benchmark's servers keep their data in (`bench_<pid>_<set>`),
/// dropped when the run ends, so a database the benchmark is pointed at does not collect them.
/// The benchmark does not link the PostgreSQL store, so it drops them with `psql`; without
/// `psql` (or when the drop fails) it says which schemas are left.
struct BenchSchemas {
    let url: String

    /// The schema of the server set `set`.
    func name(_ set: String) -> String { "bench_\(getpid())_\(set)" }

    /// Drops the schemas of `sets` with everything in them.
    func drop(_ sets: [String]) {
        let names = sets.map(name)
        let statement = names.map { "DROP SCHEMA IF EXISTS \"\($0)\" CASCADE;" }.joined(separator: " ")
        let command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", statement]
        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        var status: Int32 = 0
        let spawned = posix_spawnp(&child, command[0], nil, nil, argv, environ)
        guard spawned == 0, waitpid(child, &status, 0) == child, status == 0 else {
            print("wire: could not drop the schemas \(names.joined(separator: ", ")) (psql); drop them by hand")
            return
        }
    }
}
