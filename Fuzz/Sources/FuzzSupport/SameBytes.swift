internal import Glibc

/// Whether two byte arrays are equal, compared with `memcmp`.
///
/// `==` on `[UInt8]` is specialised into the calling module, so under `-sanitize=fuzzer` every
/// byte's comparison is traced; on outputs of 100 KiB that dominated the inflate fuzzer's time.
public func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
    }
}
