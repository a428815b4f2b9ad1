internal import Glibc
import ModerationMessages
import TestSupport
import Testing

/// ghz's call-data templates in `bench -d`: every request really differs (the server refuses a
/// second user with the same uid, and each is read back), the values are ghz's, and the report
/// says when a run goes round its requests again.
@Suite("rpc-probe bench: ghz's templates")
struct ProbeBenchTemplateTests {
    /// True for a lowercase version 4 UUID.
    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && text.allSatisfy { $0 == "-" || $0.isHexDigit }
            && !text.contains(where: \.isUppercase) && groups[2].first == "4" && "89ab".contains(groups[3].first!)
    }

    @Test("{{.RequestNumber}} and {{.UUID}}: N users created over 2 connections on 2 threads, each one different")
    func everyRequestDiffers() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let created = try probe.run(
            "bench", moderation("CreateUser"), "-d", #"{"uid":"u{{.RequestNumber}}","name":"{{.UUID}}"}"#, "-n", "30",
            "-c", "4", "--connections", "2", "--threads", "2", "-O", "json")
        #expect(created.isCleanSuccess, "30 uids, none refused as ALREADY_EXISTS: \(created)")
        let report = try JSON(parsing: created.standardOutput)
        #expect(report["statuses"][0]["codeName"].string == "OK" && report["statuses"][0]["count"].int == 30)
        #expect(report["requests"]["distinct"].int == 30 && report["requests"]["sent"].int == 30)
        #expect(report["requests"]["repeated"].bool == false)

        // Read back: u0 … u29, each named by a UUID of its own; no call beyond the 30 made u30.
        var names: Set<String> = []
        for number in 0..<30 {
            let read = try probe.run("call", moderation("GetUser"), "-d", #"{"uid":"u\#(number)"}"#)
            let name = try #require(try message(GetUserResponse.self, fromJSON: read.standardOutput).user?.name)
            #expect(Self.isUUID(name), "\(name)")
            names.insert(name)
        }
        #expect(names.count == 30)
        #expect(try probe.run("call", moderation("GetUser"), "-d", #"{"uid":"u30"}"#).exitCode == 64 + 5)

        // {{.UUID}} as the uid itself: the server would refuse a repeat.
        let byUUID = try probe.run("bench", moderation("CreateUser"), "-d", #"{"uid":"{{.UUID}}"}"#, "-n", "40")
        #expect(byUUID.isCleanSuccess, "\(byUUID)")
        #expect(byUUID.standardOutput.contains("  [OK]   40 responses"), "\(byUUID)")
        #expect(byUUID.standardOutput.contains("  Requests:     40 distinct, 40 sent, none repeated"), "\(byUUID)")
    }

    @Test("timestamps, method names and {{newUUID}} carry ghz's values")
    func ghzValues() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let before = time(nil)
        let data = #"""
            {"uid":"stamp{{ .RequestNumber }}","metadata":{"unix":"{{.TimestampUnix}}","milli":"{{.TimestampUnixMilli}}",
             "nano":"{{.TimestampUnixNano}}","rfc":"{{.Timestamp}}","fqn":"{{.FullyQualifiedName}}",
             "method":"{{.MethodName}}","service":"{{.ServiceName}}","input":"{{.InputName}}",
             "output":"{{.OutputName}}","one":"{{newUUID}}","two":"{{newUUID}}","same":"{{.UUID}} {{.UUID}}",
             "n":"{{n}}","braces":"{{kept}}"}}
            """#
        let created = try probe.run("bench", moderation("CreateUser"), "-d", data, "-n", "2")
        #expect(created.isCleanSuccess, "\(created)")
        let after = time(nil)
        let read = try probe.run("call", moderation("GetUser"), "-d", #"{"uid":"stamp1"}"#)
        let metadata = try #require(try message(GetUserResponse.self, fromJSON: read.standardOutput).user?.metadata)
        let unix = try #require(Int(metadata["unix"] ?? ""))
        #expect(unix >= before && unix <= after)
        #expect(Int(metadata["milli"] ?? "").map { $0 / 1000 } == unix)
        #expect(Int(metadata["nano"] ?? "").map { $0 / 1_000_000_000 } == unix)
        let rfc = try #require(metadata["rfc"])
        #expect(rfc.count == 20 && rfc.hasSuffix("Z") && rfc.dropFirst(10).first == "T", "\(rfc)")
        #expect(metadata["fqn"] == "moderation.v1.Moderation.CreateUser")
        #expect(metadata["method"] == "CreateUser" && metadata["service"] == "Moderation")
        #expect(metadata["input"] == "CreateUserRequest" && metadata["output"] == "CreateUserResponse")
        let one = try #require(metadata["one"])
        let two = try #require(metadata["two"])
        #expect(Self.isUUID(one) && Self.isUUID(two) && one != two, "each {{newUUID}} is new")
        let same = (metadata["same"] ?? "").split(separator: " ")
        #expect(same.count == 2 && same[0] == same[1], "one {{.UUID}} per request")
        #expect(metadata["n"] == "1" && metadata["braces"] == "{{kept}}")
    }

    @Test("--variants fewer than the calls: the run cycles and every report says the requests repeat")
    func cyclingIsReported() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let cycled = try probe.run(
            ["bench", moderation("GetUser"), "-d", #"{"uid":"x{{.RequestNumber}}"}"#, "--variants", "10", "-n", "30"])
        #expect(cycled.exitCode == 1, "no such users: \(cycled)")
        #expect(
            cycled.standardOutput.contains(
                "  Requests:     10 distinct, cycled: 30 sent, so requests repeat (--variants makes more)"), "\(cycled)"
        )
        let csv = try probe.run(
            [
                "bench", moderation("GetUser"), "-d", #"{"uid":"x{{.RequestNumber}}"}"#, "--variants", "10", "-n", "30",
                "-O", "csv",
            ])
        for row in ["requests,distinct,10", "requests,sent,30", "requests,repeated,true"] {
            #expect(csv.lines.contains(row), "\(row): \(csv)")
        }
    }

    @Test(
        "a template action ghz does not have is refused, naming those it has (exit 2)",
        arguments: [
            (
                #"{"uid":"{{.RequestNum}}"}"#,
                "{{.RequestNum}} is not a field of ghz's call data; the fields are .RequestNumber"
            ),
            (#"{"uid":"{{randomString 8}}"}"#, "{{randomString 8}} is a ghz template function rpc-probe does not have"),
        ])
    func unknownActions(_ data: String, _ message: String) throws {
        let outcome = try ProbeRunner(address: "127.0.0.1:1", apiKey: "key").run(
            "bench", moderation("CreateUser"), "-d", data, "-n", "1")
        #expect(outcome.exitCode == 2, "\(outcome)")
        #expect(outcome.standardError.contains(message), "\(outcome)")
    }
}
