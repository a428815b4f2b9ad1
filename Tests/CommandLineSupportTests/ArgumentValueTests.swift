import CommandLineSupport
import Testing

/// The typed readers: each table row is an input and what it reads as, or the whole error.
@Suite("ArgumentValue: integers, numbers, durations, switches, choices, addresses")
struct ArgumentValueTests {
    private static func value(_ text: String) -> ArgumentValue { ArgumentValue(text, name: "--flag") }

    @Test(
        "integer(in:)",
        arguments: [
            ("1", 1), ("256", 256), ("+7", 7),
        ])
    func integer(_ text: String, _ expected: Int) throws {
        #expect(try Self.value(text).integer(in: 1...256) == expected)
    }

    @Test("integer(in:) refuses", arguments: ["0", "257", "-1", "zero", "", "1.5", " 2"])
    func integerRefuses(_ text: String) {
        #expect(throws: ArgumentError("--flag: '\(text)' is not a whole number in 1...256")) {
            try Self.value(text).integer(in: 1...256)
        }
    }

    @Test("nonNegativeNumber()", arguments: [("0", 0.0), ("2.5", 2.5), ("40", 40)])
    func number(_ text: String, _ expected: Double) throws {
        #expect(try Self.value(text).nonNegativeNumber() == expected)
    }

    @Test("nonNegativeNumber() refuses", arguments: ["-1", "fast", "", "nan"])
    func numberRefuses(_ text: String) {
        #expect(throws: ArgumentError("--flag: '\(text)' is not a non-negative number")) {
            try Self.value(text).nonNegativeNumber()
        }
    }

    @Test(
        "duration() in seconds",
        arguments: [
            ("10s", 10.0), ("500ms", 0.5), ("2m", 120), ("1h", 3600), ("1.5", 1.5), ("0", 0), ("0.25s", 0.25),
            ("1m30s", 90), ("1h2m3.5s", 3723.5), ("1.5m", 90), ("250000us", 0.25), ("250000µs", 0.25),
            ("2000000000ns", 2), ("1s500ms", 1.5),
        ])
    func duration(_ text: String, _ seconds: Double) throws {
        #expect(try Self.value(text).duration() == seconds)
    }

    @Test(
        "duration() refuses",
        arguments: ["soon", "-1s", "10x", "", "ms", "1d", "1m30", "s1", "1..5s", "1 s", "1e3s", "1m-5s"])
    func durationRefuses(_ text: String) {
        #expect(throws: ArgumentError("--flag: '\(text)' is not a duration (e.g. 10s, 500ms, 2m)")) {
            try Self.value(text).duration()
        }
    }

    @Test(
        "byteSize(in:)",
        arguments: [
            ("1048576", 1 << 20), ("0", 0), ("512MiB", 512 << 20), ("2GiB", 2 << 30), ("2gib", 2 << 30),
            ("64KiB", 64 << 10), ("1TiB", 1 << 40), ("64k", 64 << 10), ("512M", 512 << 20), ("2G", 2 << 30),
            ("100MB", 100_000_000), ("1kB", 1_000), ("1GB", 1_000_000_000), ("1.5GiB", 3 << 29),
            ("1.5 GiB", 3 << 29), ("0.5K", 512), ("1.0001KiB", 1024), ("4096B", 4096), ("4096 b", 4096),
        ] as [(String, Int)])
    func byteSize(_ text: String, _ expected: Int) throws {
        #expect(try Self.value(text).byteSize(in: 0...(1 << 50)) == expected)
    }

    @Test(
        "byteSize(in:) refuses what is not a size",
        arguments: ["", "MiB", "lots", "-1MiB", "1.2.3GiB", "0x10", "1e6", "12 Mibs", "5PiB", "nan", " 5", "1,5GiB"])
    func byteSizeRefuses(_ text: String) {
        #expect(
            throws: ArgumentError(
                "--flag: '\(text)' is not a size (bytes, or a number with a unit: 64KiB, 512MiB, 2GiB)")
        ) {
            try Self.value(text).byteSize(in: 0...(1 << 50))
        }
    }

    @Test("byteSize(in:) refuses a size out of range", arguments: ["1023", "0.5KiB", "2GiB"])
    func byteSizeOutOfRange(_ text: String) {
        #expect(throws: ArgumentError("--flag: '\(text)' is not a size from 1024 to 1073741824 bytes")) {
            try Self.value(text).byteSize(in: 1024...(1 << 30))
        }
    }

    @Test("onOff() takes exactly on and off")
    func onOff() throws {
        #expect(try Self.value("on").onOff() == true)
        #expect(try Self.value("off").onOff() == false)
    }

    @Test(
        "onOff() refuses what the settings do not document",
        arguments: ["perhaps", "yes", "true", "0", "OFF", "On", ""])
    func onOffRefuses(_ text: String) {
        #expect(throws: ArgumentError("--flag: '\(text)' is not on or off")) { try Self.value(text).onOff() }
    }

    @Test(
        "boolean() takes on/off and Go's true/false, 1/0, in any case",
        arguments: [
            ("on", true), ("TRUE", true), ("True", true), ("1", true), ("off", false), ("False", false),
            ("OFF", false), ("0", false),
        ])
    func boolean(_ text: String, _ expected: Bool) throws {
        #expect(try Self.value(text).boolean() == expected)
    }

    @Test("boolean() refuses anything else", arguments: ["yes", "no", "2", "", "maybe"])
    func booleanRefuses(_ text: String) {
        #expect(throws: ArgumentError("--flag: '\(text)' is not on or off (or true or false)")) {
            try Self.value(text).boolean()
        }
    }

    enum Mode: String, CaseIterable { case full, normal }

    @Test func choiceOfAStringEnum() throws {
        #expect(try Self.value("normal").choice(of: Mode.self) == .normal)
        #expect(throws: ArgumentError("--flag: 'maybe' is not one of full, normal")) {
            try Self.value("maybe").choice(of: Mode.self)
        }
        #expect(throws: ArgumentError("--flag: 'FULL' is not one of full, normal"), "raw values match exactly") {
            try Self.value("FULL").choice(of: Mode.self)
        }
    }

    @Test func choiceFromWords() throws {
        let levels = [("trace", 0), ("info", 2), ("error", 5)]
        #expect(try Self.value("INFO").choice(levels, ignoringCase: true) == 2)
        #expect(throws: ArgumentError("--flag: 'INFO' is not one of trace, info, error")) {
            try Self.value("INFO").choice(levels)
        }
        #expect(throws: ArgumentError("--flag: 'loud' is not one of trace, info, error")) {
            try Self.value("loud").choice(levels, ignoringCase: true)
        }
    }

    @Test(
        "hostPort()",
        arguments: [
            ("127.0.0.1:7600", HostPort(host: "127.0.0.1", port: 7600)),
            ("localhost:0", HostPort(host: "localhost", port: 0)),
            ("[::1]:7600", HostPort(host: "::1", port: 7600)),
            ("::1:7600", HostPort(host: "::1", port: 7600)),
            ("[fe80::1%eth0]:1", HostPort(host: "fe80::1%eth0", port: 1)),
        ])
    func hostPort(_ text: String, _ expected: HostPort) throws {
        #expect(try Self.value(text).hostPort() == expected)
    }

    @Test(
        "hostPort() refuses, saying why",
        arguments: [
            ("nohost", "'nohost' is not HOST:PORT"),
            ("[::1]7600", "'[::1]7600' is not [HOST]:PORT"),
            (":9", "the host is empty in ':9'"),
            ("[]:9", "the host is empty in '[]:9'"),
            ("h:99999", "'99999' in 'h:99999' is not a port (0–65535)"),
            ("h:", "'' in 'h:' is not a port (0–65535)"),
            ("h:http", "'http' in 'h:http' is not a port (0–65535)"),
        ])
    func hostPortRefuses(_ text: String, _ problem: String) {
        #expect(throws: ArgumentError("--flag: " + problem)) { try Self.value(text).hostPort() }
    }

    @Test func hostPortForAClient() throws {
        let address = ArgumentValue(":7600", name: nil)
        #expect(
            try address.hostPort(ports: 1...65535, defaultHost: "127.0.0.1") == HostPort(host: "127.0.0.1", port: 7600))
        #expect(throws: ArgumentError("'0' in 'h:0' is not a port (1–65535)")) {
            try ArgumentValue("h:0", name: nil).hostPort(ports: 1...65535, defaultHost: "127.0.0.1")
        }
        #expect(throws: ArgumentError("'localhost' is not HOST:PORT"), "a positional's error has no name before it") {
            try ArgumentValue("localhost", name: nil).hostPort(ports: 1...65535)
        }
    }

    @Test(
        "HostPort prints as HOST:PORT, an IPv6 host in brackets",
        arguments: [
            (HostPort(host: "127.0.0.1", port: 7600), "127.0.0.1:7600"), (HostPort(host: "::1", port: 80), "[::1]:80"),
        ])
    func hostPortDescription(_ address: HostPort, _ text: String) {
        #expect(address.description == text)
    }

    @Test func errorNamesTheValue() {
        #expect(Self.value("0").error("must be more than 0") == ArgumentError("--flag: must be more than 0"))
        #expect(ArgumentValue("x", name: nil).error("not a method") == ArgumentError("not a method"))
    }
}
