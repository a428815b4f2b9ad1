import Glibc
import RPCCore
import Testing

@testable import ServerApp

/// The log comes out in time order: an access line waiting in a thread's buffer is written before
/// an ordinary line that comes after it, not a flush interval later.
@Suite("LogWriter: lines in time order")
struct LogWriterOrderTests {
    @Test("an access line buffered before a warning is written before it, at once")
    func accessLineBeforeLaterWarning() throws {
        let capture = LogCapture()
        var configuration = LogWriter.Configuration()
        configuration.flushIntervalMs = 10_000 // so that only the ordering, not the interval, can flush it
        let writer = LogWriter(destination: capture, configuration: configuration)
        defer { writer.stop() }
        let buffer = writer.makeLineBuffer()
        for line in ["access 1\n", "access 2\n"] {
            buffer.append(maximumBytes: line.utf8.count) { memory in
                for (index, byte) in line.utf8.enumerated() { memory[index] = byte }
                return line.utf8.count
            }
        }
        writer.write(Array("WARNING later\n".utf8))
        var waitedMs = 0
        while capture.lines.count < 3 && waitedMs < 2_000 {
            usleep(10_000)
            waitedMs += 10
        }
        #expect(capture.lines == ["access 1\n", "access 2\n", "WARNING later\n"], "after \(waitedMs) ms")
    }
}
