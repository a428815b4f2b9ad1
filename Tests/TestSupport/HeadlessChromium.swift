internal import Glibc

/// Debian's `chromium` run headless, for tests of what a browser makes of a page rpc-probe
/// wrote: the DOM it parsed (`--dump-dom`) and the pixels it drew (`--screenshot`).
///
/// `tools/setup` installs it; a test that needs it is skipped, saying why, where it is missing.
/// Each run gets a profile directory of its own, removed after, so nothing reaches the home
/// directory; `--no-sandbox` because tests may run as root, where Chromium's sandbox will not start.
public enum HeadlessChromium {
    /// `chromium` (or `chromium-browser`) on PATH, or nil.
    public static let executable: String? = {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for name in ["chromium", "chromium-browser"] {
            for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }()

    public static var isAvailable: Bool { executable != nil }

    /// The DOM Chromium built from the file at `path`, serialized.
    public static func dumpDOM(_ path: String) throws -> String {
        try run(["--dump-dom", "file://\(path)"]).standardOutput
    }

    /// What Chromium draws of the file at `path` in a window `width` × `height` CSS pixels (one
    /// device pixel each), decoded.
    public static func screenshot(_ path: String, width: Int, height: Int) throws -> PNGImage {
        let directory = TemporaryDirectory(prefix: "chromium-shot")
        defer { directory.remove() }
        let image = directory.path + "/screenshot.png"
        _ = try run([
            "--screenshot=\(image)", "--window-size=\(width),\(height)", "--force-device-scale-factor=1",
            "--hide-scrollbars", "file://\(path)",
        ])
        return try PNGImage(try TemporaryDirectory.bytes(ofFile: image))
    }

    private static func run(_ arguments: [String]) throws -> ChildProcess.Outcome {
        guard let executable else { throw TestFailure("chromium is not on PATH (tools/setup installs it)") }
        let profile = TemporaryDirectory(prefix: "chromium-profile")
        defer { profile.remove() }
        let outcome = try ChildProcess(
            executable: executable,
            arguments: [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--user-data-dir=\(profile.path)",
            ] + arguments
        ).finish(timeoutMs: 60_000)
        guard outcome.exitCode == 0 else { throw TestFailure("chromium \(arguments) failed: \(outcome)") }
        return outcome
    }
}
