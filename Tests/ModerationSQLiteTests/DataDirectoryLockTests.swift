internal import Glibc
import Moderation
import ModerationSQLite
import StoreTestSupport
import TestSupport
import Testing

/// One store per data directory: a second store on a directory already open is refused with the
/// holder's pid, whether it is in this process or another; closing (or dying) frees it.
@Suite("Data directory lock")
struct DataDirectoryLockTests {
    static func options(_ directory: TemporaryDirectory) -> SQLiteStoreOptions {
        SQLiteStoreOptions(directory: directory.path + "/data", durability: .normal, readers: 2)
    }

    @Test("a second store on an open directory is refused, naming the holder's pid; after close one opens")
    func secondStoreRefused() throws {
        let directory = TemporaryDirectory(prefix: "lock")
        defer { directory.remove() }
        let first = try SQLiteStore(options: Self.options(directory))
        do throws(ModerationError) {
            let second = try SQLiteStore(options: Self.options(directory))
            second.close()
            Issue.record("a second store opened \(directory.path)/data while the first was open")
        } catch {
            #expect(error.code == .internal)
            #expect(error.message.contains("process \(getpid())"), "\(error.message)")
            #expect(error.message.contains(directory.path + "/data/" + DataDirectoryLock.fileName))
            #expect(error.details[DataDirectoryLock.holderDetail] == "\(getpid())")
        }
        first.close()
        // Other tests of this process spawn children meanwhile: a child between its fork and its
        // exec holds a copy of every descriptor, the lock's too (O_CLOEXEC drops it at the exec),
        // so the lock may outlive `close` by that long. It must be free well within a second.
        try Self.openOnceFree(Self.options(directory)).close()
    }

    /// Opens a store, waiting up to a second while the lock still names this process (a forked
    /// child's copy of the descriptor, until its exec).
    static func openOnceFree(_ options: SQLiteStoreOptions) throws(ModerationError) -> SQLiteStore {
        let deadline = ContinuousClock.now + .seconds(1)
        while true {
            do throws(ModerationError) {
                return try SQLiteStore(options: options)
            } catch {
                guard error.details[DataDirectoryLock.holderDetail] == "\(getpid())", ContinuousClock.now < deadline
                else { throw error }
                usleep(10_000)
            }
        }
    }

    @Test("the refused store leaves the holder working")
    func holderUnharmed() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let client = harness.client()
        try client.createUser("u1")
        #expect(throws: ModerationError.self) { try SQLiteStore(options: harness.storeOptions) }
        try client.createUser("u2")
        #expect(try client.getUser("u2").uid == "u2")
        try harness.reopen()
        #expect(try harness.client().getUser("u1").uid == "u1")
    }

    @Test("a lock file left behind with a dead pid does not block a start, and gets this process's pid")
    func staleFile() throws {
        let directory = TemporaryDirectory(prefix: "lock")
        defer { directory.remove() }
        let lockFile = "data/" + DataDirectoryLock.fileName
        #expect(mkdir(directory.path + "/data", 0o755) == 0)
        try directory.write(Array("2147483646\n".utf8), to: lockFile)
        let store = try SQLiteStore(options: Self.options(directory))
        defer { store.close() }
        #expect(try directory.read(lockFile) == "\(getpid())\n")
    }

    @Test("a store that fails to open after taking the lock (a schema from a newer build) gives it back")
    func failedOpenReleases() throws {
        let directory = TemporaryDirectory(prefix: "lock")
        defer { directory.remove() }
        let options = Self.options(directory)
        try SQLiteStore(options: options).close()
        let version = try MigrationTests.userVersion(options.databasePath)
        try MigrationTests.execute(options.databasePath, "PRAGMA user_version = 999")
        for _ in 0..<2 {
            do throws(ModerationError) {
                try SQLiteStore(options: options).close()
                Issue.record("a store from a newer build was opened")
            } catch {
                #expect(error.details[DataDirectoryLock.holderDetail] == nil, "\(error.message)")
            }
        }
        try MigrationTests.execute(options.databasePath, "PRAGMA user_version = \(version)")
        try SQLiteStore(options: options).close()
    }
}
