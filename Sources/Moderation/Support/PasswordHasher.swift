internal import CSodium

/// Hashes and verifies group passwords with argon2id (libsodium's `crypto_pwhash_str`).
///
/// The hash string carries its own salt and cost parameters, so changing the configured limits
/// never invalidates stored hashes. Hashing and verifying are deliberately slow (the point of a
/// password hash); the service runs them on the calling thread, never on the store's writer.
/// `verify` compares in constant time (libsodium does).
public struct PasswordHasher: Sendable, Equatable {
    /// argon2id passes over memory (libsodium's `opslimit`).
    public var opsLimit: UInt64
    /// Memory used per hash, in bytes (libsodium's `memlimit`).
    public var memoryLimit: Int

    public init(opsLimit: UInt64, memoryLimit: Int) {
        self.opsLimit = opsLimit
        self.memoryLimit = memoryLimit
    }

    /// The default: 2 passes over 8 MiB, about 10–20 ms per hash on a current server core. Modest
    /// on purpose: a group password guards a chat room, not an account, and every join of a
    /// password group pays it.
    public static let standard = PasswordHasher(opsLimit: 2, memoryLimit: 8 << 20)

    /// libsodium's minimum cost (1 pass over 8 KiB): microseconds per hash, for tests only.
    public static let fastForTests = PasswordHasher(opsLimit: 1, memoryLimit: 8192)

    private static let ready: Bool = sodium_init() >= 0

    /// The argon2id hash string of `password`.
    public func hash(_ password: String) throws(ModerationError) -> String {
        guard Self.ready else { throw .storage("libsodium failed to initialise") }
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let status = password.withCString { cPassword in
            crypto_pwhash_str_alg(
                &output, cPassword, UInt64(password.utf8.count), opsLimit, memoryLimit,
                crypto_pwhash_alg_argon2id13())
        }
        guard status == 0 else { throw .storage("password hashing failed (out of memory?)") }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True when `password` matches `hash`.
    public func verify(_ password: String, against hash: String) -> Bool {
        guard Self.ready else { return false }
        return hash.withCString { cHash in
            password.withCString { cPassword in
                crypto_pwhash_str_verify(cHash, cPassword, UInt64(password.utf8.count)) == 0
            }
        }
    }

    /// True when two hash strings are equal, compared in constant time for equal lengths.
    static func sameHash(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count, Self.ready else { return false }
        return sodium_memcmp(left, right, left.count) == 0
    }
}
