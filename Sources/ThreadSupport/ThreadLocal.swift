internal import Glibc

/// A per-thread instance of a class, created on first use and released when the thread exits.
///
/// For scratch state that is expensive to create and must not be shared between threads
/// (compression contexts, content-matching scratch space).
public final class ThreadLocal<Value: AnyObject>: @unchecked Sendable {
    // Invariant: `make` is only called on the thread that will own the value; the key is written once.
    private let key: pthread_key_t
    private let make: @Sendable () -> Value

    public init(_ make: @escaping @Sendable () -> Value) {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        self.key = key
        self.make = make
    }

    public var value: Value {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(existing).takeUnretainedValue()
        }
        let value = make()
        pthread_setspecific(key, Unmanaged.passRetained(value as AnyObject).toOpaque())
        return value
    }
}
