import RPCCore
import Synchronization
import Testing
import ThreadSupport

/// Wake-ups held back while one thread hands work to many loops, then given once each.
@Suite("WakeDeferral: a batch's wake-ups held, then one per target")
struct WakeDeferralTests {
    final class Target: Wakeable {
        let wakes = Atomic<Int>(0)
        func wake() { wakes.add(1, ordering: .relaxed) }
        var count: Int { wakes.load(ordering: .relaxed) }
    }

    @Test("outside a batch nothing is held; inside, each target is woken once, when the outermost batch ends")
    func heldUntilTheEnd() {
        let first = Target()
        let second = Target()
        #expect(!WakeDeferral.holdBack(first), "no batch: the caller wakes it now")
        WakeDeferral.batch {
            #expect(WakeDeferral.holdBack(first))
            #expect(WakeDeferral.holdBack(second))
            WakeDeferral.batch {
                #expect(WakeDeferral.holdBack(first))
            }
            #expect(first.count == 0 && second.count == 0, "a nested batch's end wakes nothing")
            #expect(WakeDeferral.holdBack(first))
        }
        #expect(first.count == 1 && second.count == 1)
        WakeDeferral.batch {}
        #expect(first.count == 1, "an empty batch wakes nothing")
    }

    @Test("batches are per thread: another thread's holds are its own")
    func perThread() {
        let target = Target()
        WakeDeferral.batch {
            #expect(WakeDeferral.holdBack(target))
            let other = WorkerThread(name: "other") { #expect(!WakeDeferral.holdBack(target)) }
            other.join()
        }
        #expect(target.count == 1)
    }
}
