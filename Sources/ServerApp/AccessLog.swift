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
        buffer.append(maximumBytes: Self.maximumBytes(call)) { line in
            switch format {
            case .text: Self.renderText(call, time: now, slot: slot, into: &line)
            case .json: Self.renderJSON(call, time: now, slot: slot, into: &line)
            }
        }
    }

    // MARK: Rendering

    /// The longest `call`'s line can be in either format, every value escaped at worst.
    private static func maximumBytes(_ call: CallRecord) -> Int {
        256
            + LineWriter.escapedBytes(max(call.method.utf8.count, 6)) + LineWriter.escapedBytes(call.errorCode.utf8.count)
            + LineWriter.escapedBytes(call.appID.utf8.count) + LineWriter.escapedBytes(call.onBehalfOf.utf8.count)
            + LineWriter.escapedBytes(call.requestID.utf8.count) + LineWriter.escapedBytes(call.peer.utf8.count)
    }

    private static func renderText(_ call: CallRecord, time: timespec, slot: AccessLogSlot, into line: inout LineWriter) {
        slot.writeTime(time, to: &line)
        line.write(" INFO call method=")
        line.write(textValue: call.method.isEmpty ? "(none)" : call.method)
        line.write(" status=")
        line.write(textValue: call.code.name)
        line.write(" error_code=")
        line.write(textValue: call.errorCode)
        line.write(" duration_ms=")
        line.write(milliseconds: call.durationNanoseconds)
        line.write(" app=")
        line.write(textValue: call.appID)
        line.write(" on_behalf_of=")
        line.write(textValue: call.onBehalfOf)
        line.write(" request_id=")
        line.write(textValue: call.requestID)
        line.write(" peer=")
        line.write(textValue: call.peer)
        line.write(" stream=")
        line.write(decimal: UInt64(call.streamID))
        line.write(byte: UInt8(ascii: "\n"))
    }

    private static func renderJSON(_ call: CallRecord, time: timespec, slot: AccessLogSlot, into line: inout LineWriter) {
        line.write("{\"time\":\"")
        slot.writeTime(time, to: &line)
        line.write("\",\"level\":\"info\",\"msg\":\"call\",\"method\":")
        line.write(jsonString: call.method.isEmpty ? "(none)" : call.method)
        line.write(",\"status\":")
        line.write(jsonString: call.code.name)
        line.write(",\"error_code\":")
        line.write(jsonString: call.errorCode)
        line.write(",\"duration_ms\":")
        line.write(milliseconds: call.durationNanoseconds)
        line.write(",\"app\":")
        line.write(jsonString: call.appID)
        line.write(",\"on_behalf_of\":")
        line.write(jsonString: call.onBehalfOf)
        line.write(",\"request_id\":")
        line.write(jsonString: call.requestID)
        line.write(",\"peer\":")
        line.write(jsonString: call.peer)
        line.write(",\"stream\":")
        line.write(decimal: UInt64(call.streamID))
        line.write("}\n")
    }
}

/// A thread's access-log state: its line buffer, its sampling count, and the formatted second
/// of the last line (the time changes its milliseconds far more often than its second).
///
/// Touched only by its own thread (so the exclusivity checks of class properties, a runtime call
/// per access, are left out).
final class AccessLogSlot {
    @exclusivity(unchecked) private var owner: UInt64 = 0
    @exclusivity(unchecked) private var buffer: LineBuffer?
    @exclusivity(unchecked) var sampled: UInt64 = 0
    @exclusivity(unchecked) private var second = -1
    /// `2026-11-29T11:30:00.` for `second`.
    @exclusivity(unchecked) private var secondText: [UInt8] = []

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

    /// Writes `time` as `2026-11-29T11:30:00.123Z`.
    func writeTime(_ time: timespec, to line: inout LineWriter) {
        if time.tv_sec != second {
            second = time.tv_sec
            secondText.removeAll(keepingCapacity: true)
            LogTime.appendUTCSecond(time.tv_sec, to: &secondText)
        }
        secondText.withUnsafeBufferPointer { line.write($0) }
        line.write(threeDigits: time.tv_nsec / 1_000_000)
        line.write(byte: UInt8(ascii: "Z"))
    }
}
