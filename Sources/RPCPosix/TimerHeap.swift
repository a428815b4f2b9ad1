/// A timer scheduled on an event loop: `EventLoop.cancel` stops it.
///
/// Invariant: touched only on its loop's thread (it is not `Sendable`), and changed only by its
/// `EventLoop` (`schedule`, `cancel`, running the due timers) and the loop's `TimerHeap`.
final class TimerHandle {
    enum Work {
        case once(() -> Void)
        case repeating(every: UInt64, () -> Bool)
    }

    var deadline: UInt64
    /// What runs when it fires; nil once a one-shot timer fired or any timer was cancelled.
    var work: Work?
    /// Scheduling order among equal deadlines.
    var order: UInt64 = 0
    /// Where the timer is in its loop's heap; -1 when it is not in it.
    var heapIndex = -1

    init(deadline: UInt64, work: Work) {
        self.deadline = deadline
        self.work = work
    }

    /// True while the timer will still fire.
    var isPending: Bool { heapIndex >= 0 }
}

/// A binary min-heap of timers by deadline; equal deadlines run in scheduling order. Each timer
/// knows its place in the heap, so a cancelled one is removed at once (its callback, and what
/// the callback captured, released) rather than lingering until its deadline.
struct TimerHeap {
    private var entries: [TimerHandle] = []
    private var counter: UInt64 = 0

    var peekDeadline: UInt64? { entries.first?.deadline }
    var count: Int { entries.count }

    mutating func push(_ timer: TimerHandle) {
        precondition(timer.heapIndex < 0, "a timer is in the heap at most once")
        counter += 1
        timer.order = counter
        timer.heapIndex = entries.count
        entries.append(timer)
        siftUp(entries.count - 1)
    }

    /// Removes and returns the earliest timer; the heap must not be empty.
    mutating func popFirst() -> TimerHandle {
        let first = entries[0]
        removeEntry(at: 0)
        return first
    }

    /// Removes `timer` if it is in the heap.
    mutating func remove(_ timer: TimerHandle) {
        let index = timer.heapIndex
        guard index >= 0, index < entries.count, entries[index] === timer else { return }
        removeEntry(at: index)
    }

    private mutating func removeEntry(at index: Int) {
        entries[index].heapIndex = -1
        let last = entries.removeLast()
        guard index < entries.count else { return }
        entries[index] = last
        last.heapIndex = index
        siftDown(index)
        siftUp(index)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { break }
            swapEntries(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && less(left, smallest) { smallest = left }
            if right < entries.count && less(right, smallest) { smallest = right }
            if smallest == parent { break }
            swapEntries(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        entries[a].heapIndex = a
        entries[b].heapIndex = b
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        entries[a].deadline < entries[b].deadline
            || (entries[a].deadline == entries[b].deadline && entries[a].order < entries[b].order)
    }
}
