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
    /// Generic and inlined, so the caller takes no reference on `object`: a retain writes the
    /// object's header, the very wait the hint is there to avoid.
    @inlinable
    public static func prefetch<Object: AnyObject>(_ object: Object, lines: Int = 2) {
        prefetch(address: address(of: object), lines: lines)
    }

    /// Where `object` is in memory, for a later `prefetch(address:)` that must not take a
    /// reference on it (recorded while the object is at hand and in cache).
    @inlinable
    public static func address<Object: AnyObject>(of object: Object) -> UnsafeRawPointer {
        UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
    }

    /// Asks for the `lines` cache lines (64 bytes each) from `address`, to be written soon.
    public static func prefetch(address: UnsafeRawPointer, lines: Int = 2) {
        for line in 0..<lines { cshim_prefetch(address + 64 * line) }
    }
}
