import CommandLineSupport
import Testing

@Suite("ArgumentReader: flags, inline values, switches, positionals")
struct ArgumentReaderTests {
    /// Every token of `arguments`, taking a value for each flag in `valued`.
    private func read(
        _ arguments: [String], valued: Set<String> = [], style: ArgumentReader.Style = .gnu
    ) throws(ArgumentError) -> [String] {
        var reader = ArgumentReader(arguments, style: style)
        var seen: [String] = []
        while let token = reader.next() {
            switch token {
            case .flag(let flag) where valued.contains(flag.name):
                seen.append("\(flag.name)=\(try reader.value(for: flag).text)")
            case .flag(let flag): seen.append("\(flag.name)!")
            case .positional(let text): seen.append("<\(text)>")
            }
        }
        return seen
    }

    @Test(
        "tokens",
        arguments: [
            ([String](), [String]()),
            (["a", "b"], ["<a>", "<b>"]),
            (["--threads", "3"], ["--threads=3"]),
            (["--threads=3"], ["--threads=3"]),
            (["--threads="], ["--threads="]),
            (["--threads", "-1"], ["--threads=-1"]),
            (["--header=k=v"], ["--header=k=v"]),
            (["-d", "{}", "x"], ["-d={}", "<x>"]),
            (["-v", "--compress", "-"], ["-v!", "--compress!", "<->"]),
            (["-plaintext", "host:1"], ["-plaintext!", "<host:1>"]),
            (["-x=1"], ["-x=1!"]),
        ])
    func tokens(_ arguments: [String], _ expected: [String]) throws {
        #expect(try read(arguments, valued: ["--threads", "--header", "-d"]) == expected)
    }

    @Test(
        "the .go style: -name is --name, and any flag may carry =value, as Go's flag package (grpcurl) reads them",
        arguments: [
            (["-plaintext", "host:1"], ["--plaintext!", "<host:1>"]),
            (["-max-time", "5", "-d", "{}"], ["--max-time=5", "-d={}"]),
            (["-max-time=5", "-d={\"a\":1}"], ["--max-time=5", #"-d={"a":1}"#]),
            (["--max-time=2s", "-v", "-H", "k: v"], ["--max-time=2s", "-v!", "-H=k: v"]),
            (["-emit-defaults=false", "-", "x"], ["--emit-defaults!", "<->", "<x>"]),
            (["-vv"], ["--vv!"]),
        ])
    func goStyle(_ arguments: [String], _ expected: [String]) throws {
        #expect(try read(arguments, valued: ["--max-time", "-d", "-H"], style: .go) == expected)
    }

    @Test("in the .go style a flag keeps how it was typed, for messages about it")
    func goStyleSpelling() throws {
        let flag = ArgumentReader.Flag("-emit-defaults=maybe", style: .go)
        #expect(flag.name == "--emit-defaults" && flag.inlineValue == "maybe" && flag.spelled == "-emit-defaults")
        #expect(throws: ArgumentError("-emit-defaults: 'maybe' is not on or off (or true or false)")) {
            try flag.booleanValue()
        }
        #expect(try ArgumentReader.Flag("-plaintext=true", style: .go).booleanValue())
        #expect(try !ArgumentReader.Flag("-plaintext=false", style: .go).booleanValue())
        var reader = ArgumentReader(["-max-time"], style: .go)
        guard case .flag(let maxTime) = reader.next() else {
            Issue.record("not a flag")
            return
        }
        #expect(throws: ArgumentError("-max-time needs a value")) { try reader.value(for: maxTime) }
        var valued = ArgumentReader(["-max-time", "soon"], style: .go)
        guard case .flag(let given) = valued.next() else {
            Issue.record("not a flag")
            return
        }
        #expect(throws: ArgumentError("-max-time: 'soon' is not a duration (e.g. 10s, 500ms, 2m)")) {
            try valued.value(for: given).duration()
        }
    }

    @Test(
        "a missing value names the flag, and what it looks like when the caller says",
        arguments: [
            (["--threads"], nil, "--threads needs a value"),
            (["--threads"], "N", "--threads needs a value: --threads N"),
            (["-d"], nil, "-d needs a value"),
        ] as [([String], String?, String)])
    func missingValue(_ arguments: [String], _ placeholder: String?, _ message: String) {
        var reader = ArgumentReader(arguments)
        guard case .flag(let flag) = reader.next() else {
            Issue.record("not a flag")
            return
        }
        #expect(throws: ArgumentError(message)) { try reader.value(for: flag, placeholder: placeholder) }
    }

    @Test func positionalTakesOnlyAPositional() {
        var reader = ArgumentReader(["--flag", "topic"])
        #expect(reader.positional() == nil)
        #expect(!reader.isEmpty, "a flag is not consumed by positional()")
        #expect(reader.next() == .flag(ArgumentReader.Flag("--flag")))
        #expect(reader.positional() == "topic")
        #expect(reader.isEmpty)
        #expect(reader.next() == nil)
    }

    @Test func flagKeepsTheArgumentAsGiven() {
        let flag = ArgumentReader.Flag("--bogus=1")
        #expect(flag.name == "--bogus" && flag.inlineValue == "1" && flag.argument == "--bogus=1")
        #expect(ArgumentReader.Token.positional("x").argument == "x")
        #expect(ArgumentReader.Token.flag(flag).argument == "--bogus=1")
    }

    @Test(
        "a switch is on when bare; an inline value is read as on or off",
        arguments: [
            ("--compress", true), ("--compress=on", true), ("--compress=off", false), ("--compress=FALSE", false),
            ("-v", true),
        ])
    func switches(_ argument: String, _ expected: Bool) throws {
        #expect(try ArgumentReader.Flag(argument).booleanValue() == expected)
    }

    @Test func aSwitchRefusesAnotherValue() {
        #expect(throws: ArgumentError("--compress: 'maybe' is not on or off (or true or false)")) {
            try ArgumentReader.Flag("--compress=maybe").booleanValue()
        }
    }
}
