public import CProtobufC
internal import Glibc

/// A bump allocator that protobuf-c packs from and unpacks into.
///
/// protobuf-c allocates every string, array and sub-message of an unpacked message separately;
/// with the system allocator that is a `malloc`/`free` pair per field. The arena hands out memory
/// from a few large chunks and frees it all at once when a scope ends, so a message costs a
/// handful of pointer bumps and every unpack is released exactly once. A per-scope budget stops a
/// hostile message from making protobuf-c allocate far more than its size.
///
/// Each allocation is preceded by an 8-byte header with its requested size. The bridge uses it to
/// see embedded NUL characters in strings: protobuf-c copies a string of `n` bytes into an
/// allocation of `n + 1`, so a `strlen` shorter than that means the string held a NUL.
///
/// An arena is confined to one thread; `ProtoArena.scratch` gives each thread its own.
public final class ProtoArena {
    /// The protobuf-c allocator that draws from this arena (its `free` does nothing).
    public let allocator: UnsafeMutablePointer<ProtobufCAllocator>

    private let state: UnsafeMutablePointer<State>

    /// Creates an arena with one chunk of 64 KiB.
    public init() {
        state = .allocate(capacity: 1)
        let chunk = State.newChunk(capacity: State.chunkSize, previous: nil)!
        state.initialize(to: State(chunk: chunk, offset: State.chunkHeader, capacity: State.chunkSize))
        allocator = .allocate(capacity: 1)
        allocator.initialize(
            to: ProtobufCAllocator(
                alloc: { data, size in
                    data!.assumingMemoryBound(to: State.self).pointee.allocate(size, forDecoding: true)
                },
                free: { _, _ in },
                allocator_data: UnsafeMutableRawPointer(state)))
    }

    deinit {
        state.pointee.freeChunks(downTo: nil)
        state.deallocate()
        allocator.deallocate()
    }

    /// Why the last unpack failed, for the decoding error's message.
    public var unpackFailureReason: String {
        state.pointee.overBudget
            ? "decoding would need more than \(state.pointee.budget) bytes of memory"
            : ProtoDecodingError.invalidEncodingReason
    }

    /// Runs `body` with the arena; everything allocated during it is released when it returns.
    ///
    /// Scopes nest: an inner scope releases only what it allocated.
    /// - Parameter budget: bytes the scope may allocate for decoding before allocations fail.
    public func withScope<R, E: Error>(
        budget: Int = .max, _ body: (ProtoArena) throws(E) -> R
    ) throws(E) -> R {
        let saved = state.pointee
        state.pointee.budget = budget
        state.pointee.allocated = 0
        state.pointee.overBudget = false
        defer {
            state.pointee.freeChunks(downTo: saved.chunk)
            state.pointee = saved
        }
        return try body(self)
    }

    /// Uninitialized memory for one `T`, 8-byte aligned.
    public func allocate<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        allocateArray(type, count: 1)
    }

    /// Uninitialized memory for `count` values of `T`, 8-byte aligned.
    public func allocateArray<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        precondition(MemoryLayout<T>.alignment <= 8, "the arena aligns to 8 bytes")
        guard let raw = state.pointee.allocate(MemoryLayout<T>.stride * count, forDecoding: false) else {
            fatalError("out of memory while encoding a protobuf message")
        }
        return raw.bindMemory(to: type, capacity: count)
    }

    /// A NUL-terminated copy of `string` in the arena.
    ///
    /// protobuf-c strings are C strings: a `String` holding U+0000 is cut at that character.
    /// Decoding refuses such strings, so none can reach the service from the wire.
    public func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        var string = string
        return string.withUTF8 { utf8 in
            let out = allocateArray(CChar.self, count: utf8.count + 1)
            if let base = utf8.baseAddress {
                UnsafeMutableRawPointer(out).copyMemory(from: base, byteCount: utf8.count)
            }
            out[utf8.count] = 0
            return out
        }
    }

    /// A copy of `bytes` in the arena, as protobuf-c's `bytes` value.
    public func binaryData(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        let out = allocateArray(UInt8.self, count: max(bytes.count, 1))
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { out.update(from: base, count: source.count) }
        }
        return ProtobufCBinaryData(len: bytes.count, data: out)
    }

    /// The Swift string of an unpacked `string` field: valid UTF-8 without NUL, or an error
    /// naming the field.
    public func string(
        _ pointer: UnsafeMutablePointer<CChar>?, field: String, of message: String
    ) throws(ProtoDecodingError) -> String {
        guard let pointer, UnsafeRawPointer(pointer) != UnsafeRawPointer(cprotobufc_empty_string()) else {
            return ""
        }
        let length = strlen(pointer)
        let allocated = UnsafeRawPointer(pointer).load(fromByteOffset: -State.allocationHeader, as: Int.self)
        guard allocated == length + 1 else {
            throw .containsNUL(field: field, of: message)
        }
        guard let string = String(validatingCString: pointer) else {
            throw .invalidUTF8(field: field, of: message)
        }
        return string
    }

    /// The Swift bytes of an unpacked `bytes` field (embedded NULs and all).
    public static func bytes(_ data: ProtobufCBinaryData) -> [UInt8] {
        guard data.len > 0, let base = data.data else { return [] }
        return Array(UnsafeBufferPointer(start: base, count: data.len))
    }

    /// The pointer of an unpacked sub-message or element, which protobuf-c never leaves NULL.
    public static func required<T>(
        _ pointer: UnsafeMutablePointer<T>?, field: String, of message: String
    ) throws(ProtoDecodingError) -> UnsafeMutablePointer<T> {
        guard let pointer else {
            throw ProtoDecodingError(messageName: message, reason: "field \(field) is missing an element")
        }
        return pointer
    }
}

/// The bump state behind a `ProtoArena`, a plain struct so protobuf-c's allocation callback
/// touches no reference counts. Chunks form a list through their first word.
private struct State {
    static let chunkSize = 64 * 1024
    /// Each chunk starts with the pointer to the previous chunk (8 bytes, 16 for alignment).
    static let chunkHeader = 16
    /// Each allocation starts with its requested size.
    static let allocationHeader = 8

    var chunk: UnsafeMutableRawPointer
    var offset: Int
    var capacity: Int
    var allocated = 0
    var budget = Int.max
    var overBudget = false

    mutating func allocate(_ size: Int, forDecoding: Bool) -> UnsafeMutableRawPointer? {
        let needed = (Self.allocationHeader + size + 7) & ~7
        if forDecoding {
            guard allocated + needed <= budget else {
                overBudget = true
                return nil
            }
        }
        if offset + needed > capacity {
            let newCapacity = max(Self.chunkSize, Self.chunkHeader + needed)
            guard let newChunk = Self.newChunk(capacity: newCapacity, previous: chunk) else { return nil }
            chunk = newChunk
            capacity = newCapacity
            offset = Self.chunkHeader
        }
        let header = chunk + offset
        header.storeBytes(of: size, as: Int.self)
        offset += needed
        allocated += needed
        return header + Self.allocationHeader
    }

    /// Frees chunks from the current one back to (not including) `stop`; nil frees them all.
    func freeChunks(downTo stop: UnsafeMutableRawPointer?) {
        var cursor: UnsafeMutableRawPointer? = chunk
        while let current = cursor, current != stop {
            cursor = current.load(as: UnsafeMutableRawPointer?.self)
            free(current)
        }
    }

    static func newChunk(capacity: Int, previous: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        guard let memory = malloc(capacity) else { return nil }
        memory.storeBytes(of: previous, as: UnsafeMutableRawPointer?.self)
        return memory
    }
}

extension ProtoArena {
    /// This thread's arena, created on first use and freed when the thread exits.
    public static var scratch: ProtoArena {
        if let existing = pthread_getspecific(scratchKey) {
            return Unmanaged<ProtoArena>.fromOpaque(existing).takeUnretainedValue()
        }
        let arena = ProtoArena()
        pthread_setspecific(scratchKey, Unmanaged.passRetained(arena).toOpaque())
        return arena
    }
}

private let scratchKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
        if let pointer { Unmanaged<ProtoArena>.fromOpaque(pointer).release() }
    }
    return key
}()
