internal import Glibc

/// Where the package's executables are after `swift build`, for tests that run them as child
/// processes.
///
/// `swift test` cannot build them from inside a test: they must be built first, which
/// `swift build` (and so `tools/test`) does, and which `swift test` does too, since it builds
/// every product before running tests. They are looked for beside the running test binary (the
/// products directory of this very build: configuration and scratch path included), then in the
/// package's `.build/debug`.
public enum BuiltProducts {
    /// The package's root directory (this file is `Tests/TestSupport/BuiltProducts.swift`).
    public static let packageRoot: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// The path of executable `product`.
    /// - Throws: `TestFailure` saying how to build it when it is not there.
    public static func path(of product: String) throws -> String {
        let candidates = [testBinaryDirectory, packageRoot + "/.build/debug"].compactMap { $0 }.map {
            $0 + "/" + product
        }
        for candidate in candidates where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw TestFailure(
            "\(product) is not built (looked for \(candidates.joined(separator: ", "))): "
                + "run `swift build` (tools/test does) before the tests")
    }

    /// The directory of the running test executable.
    private static var testBinaryDirectory: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}
