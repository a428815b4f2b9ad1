internal import CSystemShims
internal import Glibc
import Synchronization
import ThreadSupport

/// Gives the malloc heap's free pages back to the system once a burst of work is over.
///
/// glibc keeps what a thread frees in that thread's arena, and the server has a dozen busy
/// threads: after bursts of large transient buffers (big frames, pages of members, replays) the
/// arenas hold tens of MiB that nothing uses — the soak measured 119 MB of heap for 51 MB in use
/// — and RSS only ever rises. `malloc_trim(0)` releases those pages; it walks the arenas under
/// their locks, a few milliseconds at most, so it runs when `TrimPolicy` says, not per call. One
/// thread of its own (not a dispatch queue, whose pool comes and goes) so the thread count stays
/// fixed.
final class HeapTrimmer: Sendable {
    /// Set by `stop()`, read by the thread.
    private final class StopFlag: Sendable { let value = Atomic<Bool>(false) }

    private let stopped = StopFlag()
    private let thread: WorkerThread

    /// Buffers of 256 KiB or more (big frames and bodies, pages, replays) are mapped on their
    /// own and unmapped when freed, and a heap shrinks once 1 MiB at its top is free: with
    /// glibc's dynamic thresholds, bursts of such buffers grew per-thread heaps whose free top
    /// neither free nor malloc_trim gave back (the soak saw 60 MiB resident for 8 MiB in use).
    private static let allocatorConfigured: Bool = cshim_heap_configure(256 << 10, 1 << 20) == 1

    /// - Parameter activity: a count that moves while the server works (bytes in and out).
    init(policy: TrimPolicy = TrimPolicy(), activity: @escaping @Sendable () -> UInt64) {
        _ = Self.allocatorConfigured
        let stopped = self.stopped
        thread = WorkerThread(name: "heap-trim") {
            var state = TrimPolicy.State(activity: activity())
            var ticks = 0
            while !stopped.value.load(ordering: .acquiring) {
                usleep(200_000)
                ticks += 1
                guard ticks % 5 == 0 else { continue } // one look a second; stop within 0.2 s
                if policy.secondElapsed(&state, activity: activity()) {
                    _ = cshim_heap_trim()
                }
            }
        }
    }

    /// Stops the thread (within 0.2 s) and waits for it.
    func stop() {
        stopped.value.store(true, ordering: .releasing)
        thread.join()
    }
}

/// When to trim, decided once a second from an activity count: as soon as the server has been
/// quiet for `quietSeconds` after working (a burst is over: hand its buffers back), and every
/// `busyIntervalSeconds` while it keeps working. An idle server is never trimmed twice.
struct TrimPolicy: Sendable {
    var quietSeconds = 1
    var busyIntervalSeconds = 30

    /// What the policy remembers between seconds.
    struct State {
        /// The activity count at the last look.
        var activity: UInt64
        /// Whether anything happened since the last trim.
        var workedSinceTrim = false
        var secondsQuiet = 0
        var secondsSinceTrim = 0
    }

    /// Records one more second, `activity` being the count now; true when the heap should be
    /// trimmed now.
    func secondElapsed(_ state: inout State, activity: UInt64) -> Bool {
        let worked = activity != state.activity
        state.activity = activity
        state.secondsSinceTrim += 1
        state.secondsQuiet = worked ? 0 : state.secondsQuiet + 1
        if worked { state.workedSinceTrim = true }
        guard state.workedSinceTrim,
            state.secondsQuiet >= quietSeconds || state.secondsSinceTrim >= busyIntervalSeconds
        else { return false }
        state.workedSinceTrim = worked
        state.secondsSinceTrim = 0
        return true
    }
}
