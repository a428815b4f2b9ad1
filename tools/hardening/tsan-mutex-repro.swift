// ThreadSanitizer's false positive on Synchronization.Mutex (Linux), in twenty lines: two threads
// increment a counter under one Mutex. The count comes out exact, and TSan still reports
// "Swift access race" in the withLock closure: the contended lock is handed over inside the kernel
// (a priority-inheritance futex), where TSan sees no release/acquire. Why tools/tsan.supp exists.
//
//   swiftc -sanitize=thread -g tools/hardening/tsan-mutex-repro.swift -o /tmp/tsan-mutex-repro
//   /tmp/tsan-mutex-repro      # prints "count 400000 (expected 400000)" and TSan warnings
import Glibc
import Synchronization

final class Counter: @unchecked Sendable { var value = 0 }
let counter = Counter()
let lock = Mutex<Void>(())

var threads: [pthread_t] = []
for _ in 0..<2 {
    var thread = pthread_t()
    pthread_create(
        &thread, nil,
        { _ in
            for _ in 0..<200_000 { lock.withLock { _ in counter.value += 1 } }
            return nil
        }, nil)
    threads.append(thread)
}
for thread in threads { pthread_join(thread, nil) }
print("count \(counter.value) (expected 400000)")
