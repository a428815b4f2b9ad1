internal import Glibc
import RPCCore
import RPCPosix
import Synchronization
import TestSupport
import Testing
import ThreadSupport

@testable import ServerApp

/// The access log (a line per call, formatted into the calling thread's buffer) and the one
/// writer thread every log line goes through.
@Suite("Access log and log writer: content, sampling, internal calls, drops, flushing")
struct AccessLogTests {
    /// The one method of the harness's method table (index 0).
    static let kickMember = "/moderation.v1.Moderation/KickMember"

    /// A call's record; its method index is the table's for `kickMember`, none for other paths
    /// (as the runtime sets it: the index of the path the client sent, when the table has it).
    static func record(
        method: String = kickMember, code: StatusCode = .ok, errorCode: String = "",
        stream: UInt32 = 17, requestID: String = "req-42", durationNanoseconds: UInt64 = 1_204_567
    ) -> CallRecord {
        CallRecord(
            methodIndex: method == kickMember ? 0 : nil, method: method, appID: "acme", onBehalfOf: "alice",
            requestID: requestID,
            peer: "10.0.0.7:53122", streamID: stream, code: code, errorCode: errorCode,
            durationNanoseconds: durationNanoseconds)
    }

    /// An access log over a writer into a capture; `flush` stops the writer, so every line is there.
    struct Harness {
        let capture = LogCapture()
        let writer: LogWriter
        let log: AccessLog

        init(
            format: Logger.Format = .text, selection: AccessLog.Selection = AccessLog.Selection(),
            writerConfiguration: LogWriter.Configuration = LogWriter.Configuration()
        ) {
            writer = LogWriter(destination: capture, configuration: writerConfiguration)
            log = AccessLog(writer: writer, format: format, selection: selection, methods: [AccessLogTests.kickMember])
        }

        func flush() -> [String] {
            writer.stop()
            return capture.lines
        }
    }

    @Test("a text line has today's content and layout")
    func textLine() throws {
        let harness = Harness()
        harness.log.record(Self.record())
        harness.log.record(Self.record(code: .notFound, errorCode: "ERR_GROUP_NOT_FOUND", requestID: ""))
        let lines = harness.flush()
        try #require(lines.count == 2)
        let timestamp = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /#
        #expect(lines[0].prefixMatch(of: timestamp) != nil, "\(lines[0])")
        #expect(
            lines[0].split(separator: " ", maxSplits: 1)[1]
                == "INFO call method=/moderation.v1.Moderation/KickMember status=OK error_code=\"\" duration_ms=1.204 "
                + "app=acme on_behalf_of=alice request_id=req-42 peer=10.0.0.7:53122 stream=17 wire=mrpc\n")
        #expect(lines[1].contains(" status=NOT_FOUND error_code=ERR_GROUP_NOT_FOUND "), "\(lines[1])")
        #expect(lines[1].contains(" request_id=\"\" "), "empty values are quoted: \(lines[1])")
    }

    @Test("the same line rendered by Logger and by the access log agree, but for the time")
    func sameAsLogger() throws {
        for format in Logger.Format.allCases {
            let harness = Harness(format: format)
            let call = Self.record(durationNanoseconds: 59_000)
            harness.log.record(call)
            let line = try #require(harness.flush().first)
            let expected = Logger(level: .info, format: format).render(
                .info, "call",
                [
                    ("method", call.method), ("status", call.code.name), ("error_code", call.errorCode),
                    ("duration_ms", LogMilliseconds(nanoseconds: call.durationNanoseconds)), ("app", call.appID),
                    ("on_behalf_of", call.onBehalfOf), ("request_id", call.requestID), ("peer", call.peer),
                    ("stream", call.streamID), ("wire", call.wire.rawValue),
                ])
            let withoutTime = { (line: String) in line.replacing(#/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/#, with: "T")
            }
            #expect(withoutTime(line) == withoutTime(expected), "\(format)")
        }
    }

    @Test("a JSON line is an object with numbers as numbers")
    func jsonLine() throws {
        let harness = Harness(format: .json)
        // A path that is not a method of the server is the client's text, escaped.
        harness.log.record(Self.record(method: "/weird\"path\\", requestID: "tab\there"))
        let line = try #require(harness.flush().first)
        let object = try JSON(parsing: String(line.dropLast()))
        #expect(object["msg"].string == "call")
        #expect(object["level"].string == "info")
        #expect(object["method"].string == "/weird\"path\\")
        #expect(object["request_id"].string == "tab\there")
        #expect(object["duration_ms"].number == "1.204")
        #expect(object["stream"].number == "17")
        #expect(object["wire"].string == "mrpc")
        #expect(object["error_code"].string == "")
    }

    @Test("a gRPC call's line says its wire; a refusal the authentication throttle kept out gets none")
    func wireAndThrottle() throws {
        let harness = Harness()
        let grpc = Self.record()
        harness.log.record(
            CallRecord(
                context: grpc.context, methodIndex: grpc.methodIndex, code: .ok, errorCode: "",
                durationNanoseconds: 1, isInternal: false, wire: .grpc))
        harness.log.record(
            CallRecord(
                context: grpc.context, methodIndex: grpc.methodIndex, code: .unauthenticated,
                errorCode: "ERR_UNAUTHENTICATED", durationNanoseconds: 0, isInternal: false, wire: .grpc,
                logged: false))
        let lines = harness.flush()
        try #require(lines.count == 1, "\(lines)")
        #expect(lines[0].hasSuffix(" stream=17 wire=grpc\n"), "\(lines[0])")
    }

    @Test("sampling keeps one successful call in N per thread, and every failed call")
    func sampling() {
        let harness = Harness(selection: AccessLog.Selection(sampleEvery: 4))
        for stream in 1...8 { harness.log.record(Self.record(stream: UInt32(stream))) }
        harness.log.record(Self.record(code: .permissionDenied, errorCode: "ERR_PERMISSION_DENIED", stream: 99))
        let lines = harness.flush()
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.filter { $0.contains("status=OK") }.count == 2)
        #expect(lines.last?.contains("stream=99") == true)
    }

    @Test("reflection and health calls are left out unless asked for", arguments: [false, true])
    func internalCalls(included: Bool) {
        let harness = Harness(selection: AccessLog.Selection(includeInternal: included))
        for path in [
            "/mrpc.reflection.v1.Reflection/ListServices", "/mrpc.health.v1.Health/Check",
            "/grpc.health.v1.Health/Check", "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        ] {
            harness.log.record(Self.record(method: path))
        }
        harness.log.record(Self.record(method: "/mrpc.diagnostics.v1.Diagnostics/Echo"))
        harness.log.record(Self.record())
        #expect(harness.flush().count == (included ? 7 : 2))
    }

    @Test(
        "the path decides what is internal",
        arguments: [
            ("/grpc.health.v1.Health/Watch", true), ("/mrpc.reflection.v1.Reflection/GetFileDescriptorSet", true),
            ("/moderation.v1.Moderation/KickMember", false), ("/mrpc.diagnostics.v1.Diagnostics/Echo", false),
            ("grpc.health.v1.Health/Check", false), ("/grpc.health.v1.Health", false), ("", false),
        ])
    func internalPaths(path: String, expected: Bool) {
        #expect(RuntimeServices.isInternal(path: path) == expected)
    }

    /// An output that holds every write until it is opened: a disk that cannot keep up.
    final class StalledOutput: LogOutput {
        let open = ConditionLock(false)
        let written = Mutex<[UInt8]>([])

        func write(_ lines: [UInt8]) {
            open.withLock(when: { $0 }) { _ in }
            written.withLock { $0 += lines }
        }
    }

    @Test("a writer that cannot keep up drops lines and counts them; the callers never wait, memory stays bounded")
    func dropsWhenBehind() throws {
        let output = StalledOutput()
        var configuration = LogWriter.Configuration()
        configuration.bufferBytes = 4_096
        configuration.maxQueuedBytes = 16_384
        let writer = LogWriter(destination: output, configuration: configuration)
        let log = AccessLog(
            writer: writer, format: .text, selection: AccessLog.Selection(), methods: [AccessLogTests.kickMember])
        let lines = 20_000
        let started = monotonicNow()
        for stream in 0..<lines { log.record(Self.record(stream: UInt32(stream))) }
        let elapsedMs = (monotonicNow() - started) / 1_000_000
        #expect(writer.droppedLines > 0)
        #expect(elapsedMs < 5_000, "recording did not wait for the stalled writer (\(elapsedMs) ms)")
        output.open.withLock { $0 = true }
        output.open.broadcast()
        writer.stop()
        let written = output.written.withLock { $0.filter { $0 == UInt8(ascii: "\n") }.count }
        #expect(written + Int(writer.droppedLines) == lines, "\(written) written + \(writer.droppedLines) dropped")
        // What was kept: the queue's bound, one block being written and the thread's buffer.
        let keptBytes = output.written.withLock { $0.count }
        #expect(keptBytes <= configuration.maxQueuedBytes + 3 * (configuration.bufferBytes + 1_024), "\(keptBytes)")
    }

    @Test("a part-filled buffer is written one flush interval after its first line, with no more lines coming")
    func flushInterval() throws {
        let capture = LogCapture()
        var configuration = LogWriter.Configuration()
        configuration.flushIntervalMs = 50
        let writer = LogWriter(destination: capture, configuration: configuration)
        defer { writer.stop() }
        let log = AccessLog(
            writer: writer, format: .text, selection: AccessLog.Selection(), methods: [AccessLogTests.kickMember])
        log.record(Self.record())
        let deadline = monotonicNow() + 2_000_000_000
        while capture.lines.isEmpty && monotonicNow() < deadline { usleep(5_000) }
        #expect(capture.lines.count == 1)
        // Ordinary lines are written at once, not after an interval.
        writer.write(Array("an ordinary line\n".utf8))
        let soon = monotonicNow() + 2_000_000_000
        while capture.lines.count < 2 && monotonicNow() < soon { usleep(1_000) }
        #expect(capture.lines.last == "an ordinary line\n")
    }

    @Test("lines from many threads all arrive, whole, each once")
    func manyThreads() throws {
        // Room for every line: the capture (a lock and a String per line) is slower than 8
        // threads formatting, and this test is about whole lines, not drops.
        var configuration = LogWriter.Configuration()
        configuration.maxQueuedBytes = 64 << 20
        let harness = Harness(writerConfiguration: configuration)
        let threads = (0..<8).map { thread in
            WorkerThread(name: "access-\(thread)") {
                for call in 0..<5_000 {
                    harness.log.record(Self.record(stream: UInt32(thread * 100_000 + call)))
                }
            }
        }
        for thread in threads { thread.join() }
        let lines = harness.flush()
        #expect(harness.writer.droppedLines == 0)
        #expect(lines.count == 40_000)
        let streams = Set(
            lines.compactMap { line in
                line.split(separator: " stream=").last.flatMap { Int($0.prefix { $0 != " " }) }
            })
        #expect(streams.count == 40_000)
    }

    @Test("/metrics: the dropped lines, and internal calls counted apart from the service's")
    func metrics() {
        let harness = Harness()
        defer { _ = harness.flush() }
        let metrics = ServerMetrics(
            methods: ["/moderation.v1.Moderation/KickMember", "/mrpc.health.v1.Health/Check"],
            accessLog: harness.log, gauges: { ServerGauges.accessLogSamples(harness.log) })
        metrics.callEnded(Self.record())
        let health = CallRecord(
            methodIndex: 1, method: "/mrpc.health.v1.Health/Check", appID: "acme", onBehalfOf: "", requestID: "",
            peer: "p", streamID: 1, code: .ok, errorCode: "", durationNanoseconds: 1)
        metrics.callEnded(health)
        metrics.callEnded(health)
        let text = metrics.render()
        #expect(
            text.contains(
                "mrpc_calls_total{method=\"/moderation.v1.Moderation/KickMember\",code=\"OK\",wire=\"mrpc\"} 1\n"))
        #expect(!text.contains("mrpc_calls_total{method=\"/mrpc.health.v1.Health/Check\""))
        #expect(
            text.contains(
                "mrpc_internal_calls_total{method=\"/mrpc.health.v1.Health/Check\",code=\"OK\",wire=\"mrpc\"} 2\n"))
        #expect(!text.contains("mrpc_call_duration_seconds_count{method=\"/mrpc.health.v1.Health/Check\"}"))
        #expect(
            text.contains("# TYPE moderation_access_log_dropped_total counter\nmoderation_access_log_dropped_total 0\n")
        )
    }
}
