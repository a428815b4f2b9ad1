internal import Glibc
import Synchronization
import Testing
import ThreadSupport

/// The one thread starter: the thread carries its name, `join` waits for the body, and a
/// detached thread runs too.
@Suite("WorkerThread")
struct WorkerThreadTests {
    /// The calling thread's name as the kernel knows it (Glibc's module lacks pthread_getname_np).
    static func currentThreadName() -> String {
        var name = [UInt8](repeating: 0, count: 32)
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        let count = fd < 0 ? 0 : max(0, read(fd, &name, name.count))
        if fd >= 0 { close(fd) }
        return String(decoding: name[0..<count].prefix { $0 != 10 }, as: UTF8.self)
    }

    @Test(
        "The thread is named, and its name is cut to the kernel's 15 bytes",
        arguments: [
            ("ts-named", "ts-named"),
            ("a-thread-name-longer-than-15", "a-thread-name-l"),
        ])
    func named(name: String, expected: String) {
        let seen = ConditionLock<String?>(nil)
        let thread = WorkerThread(name: name) {
            let current = Self.currentThreadName()
            seen.withLock { $0 = current }
        }
        thread.join()
        #expect(seen.withLock { $0 } == expected)
    }

    @Test("join returns after the body has, and again at once")
    func joins() {
        let finished = Atomic<Bool>(false)
        let thread = WorkerThread(name: "ts-join") {
            usleep(50_000)
            finished.store(true, ordering: .releasing)
        }
        thread.join()
        let done = finished.load(ordering: .acquiring)
        #expect(done)
        thread.join()
    }

    @Test("A detached thread runs its body under its name")
    func detached() {
        let seen = ConditionLock<String?>(nil)
        WorkerThread.detached(name: "ts-detached") {
            let current = Self.currentThreadName()
            seen.withLock { $0 = current }
            seen.signal()
        }
        let name = seen.withLock(when: { $0 != nil }, timeout: .seconds(10)) { $0 }
        #expect(name == "ts-detached")
    }
}
