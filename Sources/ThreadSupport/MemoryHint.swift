internal import CSystemShims

/// Tells the processor which objects a loop is about to touch.
///
/// The event hub's fan-out walks thousands of subscriptions for each event, each object most
/// likely out of cache, and each reached through the one before (subscription, then its
/// stream): waiting for each in turn is most of a delivery's time. Asked for a few objects
/// ahead, the memory arrives while the loop works on the current one. A hint only: it changes
/// nothing a program computes.
public enum MemoryHint {
    /// Asks for the first `lines` cache lines (64 bytes each) of `object`, to be written soon.
    public static func prefetch(_ object: AnyObject, lines: Int = 2) {
        let start = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for line in 0..<lines { cshim_prefetch(start + 64 * line) }
    }
}
