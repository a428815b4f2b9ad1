internal import Glibc
import RPCCore
import Synchronization

/// The access log: one `info` line per ended call, in the logger's format.
///
/// A line costs its formatting and nothing else: it is written as bytes, with no `String` built,
/// into the calling thread's own `LineBuffer`, and the `LogWriter` thread writes the buffers in
/// large blocks. Calls end on event loops, workers and the store's completer alike, so every
/// such thread has its buffer (found through a thread-local slot).
final class AccessLog: Sendable {
    /// Which calls get a line.
    struct Selection: Sendable {
        /// One successful call in `sampleEvery` gets a line (per thread); every failed call does.
        var sampleEvery = 1
        /// Runtime-internal calls (reflection, health) too.
        var includeInternal = false
    }

    private let writer: LogWriter
    private let format: Logger.Format
    private let selection: Selection
    /// Tells this log's buffers from another's in a thread's slot (tests run several servers
    /// in one process; an address could be reused, a number is not).
    private let id: UInt64

    private static let nextID = Atomic<UInt64>(1)
    private static let slots = ThreadLocal { AccessLogSlot() }

    init(writer: LogWriter, format: Logger.Format, selection: Selection) {
        self.writer = writer
        self.format = format
        self.selection = selection
        precondition(selection.sampleEvery >= 1, "sampleEvery must be at least 1")
        id = Self.nextID.add(1, ordering: .relaxed).oldValue
    }

    /// Lines dropped because the writer could not keep up (all of its users' lines, in practice
    /// this log's: ordinary lines are never dropped).
    var droppedLines: UInt64 { writer.droppedLines }

    /// Writes `call`'s line, unless the selection leaves it out.
    func record(_ call: CallRecord) {
        if call.isInternal && !selection.includeInternal { return }
        let slot = Self.slots.value
        if selection.sampleEvery > 1 && call.code == .ok {
            slot.sampled &+= 1
            guard slot.sampled % UInt64(selection.sampleEvery) == 0 else { return }
        }
        let buffer = slot.buffer(for: id, writer: writer)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let format = self.format
        buffer.append { bytes in
            switch format {
            case .text: Self.renderText(call, time: now, slot: slot, into: &bytes)
            case .json: Self.renderJSON(call, time: now, slot: slot, into: &bytes)
            }
        }
    }

    // MARK: Rendering

    private static func renderText(_ call: CallRecord, time: timespec, slot: AccessLogSlot, into bytes: inout [UInt8]) {
        slot.appendTime(time, to: &bytes)
        bytes.append(contentsOf: " INFO call method=".utf8)
        appendText(call.method.isEmpty ? "(none)" : call.method, to: &bytes)
        bytes.append(contentsOf: " status=".utf8)
        bytes.append(contentsOf: call.code.name.utf8)
        bytes.append(contentsOf: " error_code=".utf8)
        appendText(call.errorCode, to: &bytes)
        bytes.append(contentsOf: " duration_ms=".utf8)
        LogMilliseconds.append(nanoseconds: call.durationNanoseconds, to: &bytes)
        bytes.append(contentsOf: " app=".utf8)
        appendText(call.appID, to: &bytes)
        bytes.append(contentsOf: " on_behalf_of=".utf8)
        appendText(call.onBehalfOf, to: &bytes)
        bytes.append(contentsOf: " request_id=".utf8)
        appendText(call.requestID, to: &bytes)
        bytes.append(contentsOf: " peer=".utf8)
        appendText(call.peer, to: &bytes)
        bytes.append(contentsOf: " stream=".utf8)
        LogDigits.append(UInt64(call.streamID), to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    private static func renderJSON(_ call: CallRecord, time: timespec, slot: AccessLogSlot, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: "{\"time\":\"".utf8)
        slot.appendTime(time, to: &bytes)
        bytes.append(contentsOf: "\",\"level\":\"info\",\"msg\":\"call\",\"method\":".utf8)
        appendJSON(call.method.isEmpty ? "(none)" : call.method, to: &bytes)
        bytes.append(contentsOf: ",\"status\":\"".utf8)
        bytes.append(contentsOf: call.code.name.utf8)
        bytes.append(contentsOf: "\",\"error_code\":".utf8)
        appendJSON(call.errorCode, to: &bytes)
        bytes.append(contentsOf: ",\"duration_ms\":".utf8)
        LogMilliseconds.append(nanoseconds: call.durationNanoseconds, to: &bytes)
        bytes.append(contentsOf: ",\"app\":".utf8)
        appendJSON(call.appID, to: &bytes)
        bytes.append(contentsOf: ",\"on_behalf_of\":".utf8)
        appendJSON(call.onBehalfOf, to: &bytes)
        bytes.append(contentsOf: ",\"request_id\":".utf8)
        appendJSON(call.requestID, to: &bytes)
        bytes.append(contentsOf: ",\"peer\":".utf8)
        appendJSON(call.peer, to: &bytes)
        bytes.append(contentsOf: ",\"stream\":".utf8)
        LogDigits.append(UInt64(call.streamID), to: &bytes)
        bytes.append(contentsOf: "}\n".utf8)
    }

    /// A text-format value: as it is, or as a JSON string when empty or holding a space, a quote,
    /// `=` or a newline (what `Logger` does).
    private static func appendText(_ value: String, to bytes: inout [UInt8]) {
        var plain = !value.isEmpty
        for byte in value.utf8 where byte == 0x20 || byte == 0x22 || byte == 0x3D || byte == 0x0A {
            plain = false
            break
        }
        if plain {
            bytes.append(contentsOf: value.utf8)
        } else {
            bytes.append(contentsOf: Logger.jsonString(value).utf8)
        }
    }

    /// A JSON string literal.
    private static func appendJSON(_ value: String, to bytes: inout [UInt8]) {
        for byte in value.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            bytes.append(contentsOf: Logger.jsonString(value).utf8)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: value.utf8)
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A thread's access-log state: its line buffer, its sampling count, and the formatted second
/// of the last line (the time changes its milliseconds far more often than its second).
///
/// Touched only by its own thread.
final class AccessLogSlot {
    private var owner: UInt64 = 0
    private var buffer: LineBuffer?
    var sampled: UInt64 = 0
    private var second = -1
    private var secondText: [UInt8] = []

    deinit { buffer?.abandon() }

    /// This thread's buffer with `writer`, made (and registered) on first use.
    func buffer(for log: UInt64, writer: LogWriter) -> LineBuffer {
        if owner == log, let buffer { return buffer }
        buffer?.abandon()
        let fresh = writer.makeLineBuffer()
        owner = log
        buffer = fresh
        return fresh
    }

    /// Appends `time` as `2026-11-29T11:30:00.123Z`.
    func appendTime(_ time: timespec, to bytes: inout [UInt8]) {
        if time.tv_sec != second {
            second = time.tv_sec
            secondText.removeAll(keepingCapacity: true)
            LogTime.appendUTCSecond(time.tv_sec, to: &secondText)
        }
        bytes.append(contentsOf: secondText)
        LogDigits.append(time.tv_nsec / 1_000_000, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }
}
