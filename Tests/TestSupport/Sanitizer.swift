internal import Glibc

/// Which sanitizer, if any, this test process was built with, for the few tests that bound a
/// duration: instrumentation makes every memory access slower (ThreadSanitizer 5–15×).
public enum Sanitizer {
    /// True when built with `-sanitize=thread` (its runtime exports `__tsan_init`).
    public static let thread = hasSymbol("__tsan_init")
    /// True when built with `-sanitize=address`.
    public static let address = hasSymbol("__asan_init")

    /// The factor by which a test scales a time bound that holds without instrumentation.
    public static let timeScale: Double = thread ? 8 : address ? 3 : 1

    private static func hasSymbol(_ name: String) -> Bool {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) != nil // RTLD_DEFAULT
    }
}
