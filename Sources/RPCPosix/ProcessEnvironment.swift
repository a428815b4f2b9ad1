internal import Glibc

/// The process environment as a dictionary, read once by each executable's `main` so that
/// nothing below it reads global state (and tests can pass their own).
public enum ProcessEnvironment {
    /// Every `NAME=value` entry of `environ`.
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
