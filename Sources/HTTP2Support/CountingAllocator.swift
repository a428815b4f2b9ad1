internal import CNGHTTP2
internal import Glibc

/// nghttp2's allocator for one session, counting the bytes it holds: the HPACK tables, the
/// streams, the frames queued to send — what a peer can make the session keep, which the server
/// counts in its memory budget. Each block carries its size in a 16-byte header in front (16
/// keeps malloc's alignment), so `free` knows what to take off.
///
/// The count lives at `counter`, which must outlive the session (`SessionState` owns it).
enum CountingAllocator {
    private static let header = 16

    static func mem(counting counter: UnsafeMutablePointer<Int>) -> nghttp2_mem {
        nghttp2_mem(
            mem_user_data: UnsafeMutableRawPointer(counter), malloc: allocate, free: release, calloc: zeroed,
            realloc: resize)
    }

    private static let allocate: nghttp2_malloc = { size, user in
        guard let base = malloc(size + CountingAllocator.header) else { return nil }
        return CountingAllocator.track(base, size, user)
    }

    private static let zeroed: nghttp2_calloc = { count, size, user in
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, let base = calloc(1, total + CountingAllocator.header) else { return nil }
        return CountingAllocator.track(base, total, user)
    }

    private static let release: nghttp2_free = { pointer, user in
        guard let pointer else { return }
        let base = pointer - CountingAllocator.header
        user!.assumingMemoryBound(to: Int.self).pointee -= base.load(as: Int.self)
        free(base)
    }

    private static let resize: nghttp2_realloc = { pointer, size, user in
        guard let pointer else {
            guard let base = malloc(size + CountingAllocator.header) else { return nil }
            return CountingAllocator.track(base, size, user)
        }
        let old = pointer - CountingAllocator.header
        let oldSize = old.load(as: Int.self)
        guard let base = realloc(old, size + CountingAllocator.header) else { return nil }
        user!.assumingMemoryBound(to: Int.self).pointee -= oldSize
        return CountingAllocator.track(base, size, user)
    }

    private static func track(_ base: UnsafeMutableRawPointer, _ size: Int, _ user: UnsafeMutableRawPointer?)
        -> UnsafeMutableRawPointer
    {
        base.storeBytes(of: size, as: Int.self)
        user!.assumingMemoryBound(to: Int.self).pointee += size
        return base + header
    }
}
