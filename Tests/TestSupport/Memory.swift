internal import CTestSupport
import RPCPosix

/// The process's memory, for tests that bound what the server holds.
public enum Memory {
    /// Resident set size in bytes.
    public static var resident: Int { Int(residentMemoryBytes()) }

    /// Bytes malloc has handed out and not had back: unlike RSS, not lowered by reuse of memory
    /// that earlier tests freed.
    public static var heapInUse: Int { ctest_heap_bytes_in_use() }

    /// Gives free malloc memory back to the system, so that RSS growth measured after it is new.
    public static func trim() { ctest_malloc_trim() }

    /// The process's address space in bytes (VmSize): a thread that ended without being joined
    /// or detached keeps its whole stack mapped here.
    public static var virtualSize: Int { ctest_virtual_bytes() }

    /// The stack of a thread created with default attributes, in bytes.
    public static var defaultThreadStack: Int { ctest_default_thread_stack_bytes() }
}
