internal import Glibc

/// Fails the fuzz run when a property does not hold: prints what broke and aborts, so libFuzzer
/// (and AddressSanitizer's handler) saves the input as a crash.
///
/// Not `precondition`: that is compiled out under `-Ounchecked` and says nothing useful; this
/// always checks and always explains.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        var text = "fuzz property failed: \(message())\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        abort()
    }
}
