import ByteCoding
import Testing

/// proto3 JSON's pieces of text, which both JSON encoders write through.
@Suite("JSONText")
struct JSONTextTests {
    @Test(
        "Integers as String(_:) writes them",
        arguments: [0, 1, 9, 10, 99, 100, 1_000_000_007, -1, -10, .max, .min] as [Int64])
    func signedIntegers(_ value: Int64) {
        var out: [UInt8] = [0x2A]
        JSONText.appendInteger(value, to: &out)
        #expect(out == [0x2A] + Array(String(value).utf8))
        out = []
        JSONText.appendQuotedInteger(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "\"\(value)\"")
    }

    @Test(
        "Unsigned integers as String(_:) writes them",
        arguments: [0, 7, 10, 4_294_967_295, 10_000_000_000_000_000_000, .max] as [UInt64])
    func unsignedIntegers(_ value: UInt64) {
        var out: [UInt8] = []
        JSONText.appendInteger(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(value))
    }

    @Test(
        "Strings: quotes, backslashes and control characters escaped, everything else as it is",
        arguments: [
            ("", #""""#),
            ("plain", #""plain""#),
            ("a\"b\\c/d", #""a\"b\\c/d""#),
            ("\n\r\t\u{8}\u{C}", #""\n\r\t\b\f""#),
            ("\u{0}\u{1}\u{1F}\u{7F}", "\"\\u0000\\u0001\\u001F\u{7F}\""),
            ("é 日本 🙂 \u{2028}", "\"é 日本 🙂 \u{2028}\""),
            ("\"", #""\"""#),
        ])
    func strings(_ input: String, _ expected: String) {
        var out: [UInt8] = []
        JSONText.appendQuoted(input, to: &out)
        #expect(out == Array(expected.utf8))
    }

    /// (From 1e15 on, integers are Swift's description too: "1000000000000000.0", then "1e+16".)
    @Test(
        "Doubles: integers without a fraction, others in Swift's shortest form, non-finite ones named",
        arguments: [
            (0, "0"), (-0.0, "-0"), (3, "3"), (0.1, "0.1"), (1e15, "1000000000000000.0"),
            (999_999_999_999_999, "999999999999999"),
            (1e21, "1e+21"), (1e-7, "1e-07"), (.nan, #""NaN""#), (.infinity, #""Infinity""#),
            (-.infinity, #""-Infinity""#),
        ] as [(Double, String)])
    func doubles(_ value: Double, _ expected: String) {
        var out: [UInt8] = []
        JSONText.appendDouble(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == expected)
    }

    @Test func floatsAndBytes() {
        var out: [UInt8] = []
        JSONText.appendFloat(0.1, to: &out)
        JSONText.appendFloat(16_777_216, to: &out)
        JSONText.appendFloat(-.infinity, to: &out)
        JSONText.appendBase64([0xFB, 0xFF], to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"0.116777216.0"-Infinity""+/8=""#)
    }
}
