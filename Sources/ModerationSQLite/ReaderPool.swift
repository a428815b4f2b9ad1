internal import Glibc
internal import Moderation
internal import Synchronization

/// Read-only connections for snapshot reads, claimed without locks.
///
/// A fixed array of slots, each owned by whoever flips its flag from free to taken; a thread
/// starts looking at the slot its thread id points to, so threads mostly keep to their own slot
/// and never contend. When every slot is taken a temporary connection is opened rather than
/// waiting. A slot's session may keep its read transaction open between reads (see
/// `SQLiteSession.beginRead`); the writer ends those that a commit made stale, claiming the slot
/// like a reader would.
final class ReaderPool: Sendable {
    private final class Slot: @unchecked Sendable {
        // Invariant: `session` is read and written only by the thread that set `taken` from
        // false to true, until it sets it back.
        let taken = Atomic<Bool>(false)
        var session: SQLiteSession?
    }

    /// A session lent to one read.
    struct Lease {
        let session: SQLiteSession
        fileprivate let slot: Int?
    }

    private let slots: [Slot]
    private let open: @Sendable () throws(ModerationError) -> SQLiteSession

    init(size: Int, open: @escaping @Sendable () throws(ModerationError) -> SQLiteSession) {
        slots = (0..<max(1, size)).map { _ in Slot() }
        self.open = open
    }

    func checkout() throws(ModerationError) -> Lease {
        let start = Int((((UInt(pthread_self()) >> 8) &* 0x9E37_79B9_7F4A_7C15) >> 33) % UInt(slots.count))
        for offset in 0..<slots.count {
            let index = (start + offset) % slots.count
            let slot = slots[index]
            guard slot.taken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
                continue
            }
            if let session = slot.session { return Lease(session: session, slot: index) }
            do {
                let session = try open()
                slot.session = session
                return Lease(session: session, slot: index)
            } catch {
                slot.taken.store(false, ordering: .releasing)
                throw error
            }
        }
        return Lease(session: try open(), slot: nil)
    }

    func checkin(_ lease: Lease) {
        guard let index = lease.slot else {
            lease.session.endRead()
            return
        }
        slots[index].taken.store(false, ordering: .releasing)
    }

    /// Ends the read transactions of idle readers opened before `generation`, so that old
    /// snapshots do not hold WAL checkpoints back (the writer calls this after each commit).
    func releaseSnapshots(before generation: UInt64) {
        for slot in slots
        where slot.taken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            if let session = slot.session, (session.readGeneration ?? generation) < generation {
                session.endRead()
            }
            slot.taken.store(false, ordering: .releasing)
        }
    }

    /// Closes every reader's connection; the store is closed, nothing reads any more.
    func drain() {
        for slot in slots {
            while !slot.taken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
                sched_yield()
            }
            slot.session = nil
        }
    }
}
