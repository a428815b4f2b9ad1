internal import CSystemShims
internal import Glibc
import RPCCore
import Synchronization
import ThreadSupport

/// The access log: one `info` line per ended call, in the logger's format.
///
/// A line costs its formatting and nothing else: it is written as bytes, with no `String` built,
/// into the calling thread's own `LineBuffer`, and the `LogWriter` thread writes the buffers in
/// large blocks. Calls end on event loops, workers and the store's completer alike, so every
/// such thread has its buffer (found through a thread-local slot).
final class AccessLog: @unchecked Sendable {
    // Invariant: `names` is allocated in `init`, never written after it, freed in `deinit`; the
    // `cshim_text`s of `methodNames` and `statusNames` point into it.

    /// Which calls get a line.
    struct Selection: Sendable {
        /// One successful call in `sampleEvery` gets a line (per thread); every failed call does.
        var sampleEvery = 1
        /// Runtime-internal calls (reflection, health) too.
        var includeInternal = false
    }

    private let writer: LogWriter
    private let json: Int32
    private let selection: Selection
    /// Tells this log's buffers from another's in a thread's slot (tests run several servers
    /// in one process; an address could be reused, a number is not).
    private let id: UInt64
    /// The method table's paths, the status codes' and the wires' names, as bytes made once: a line copies
    /// them from here, where a `String` would need a closure to reach its bytes.
    private let names: UnsafeMutablePointer<UInt8>
    private let methodNames: [cshim_text]
    private let statusNames: [cshim_text]
    /// `WireKind`'s names, in `allCases` order.
    private let wireNames: [cshim_text]

    private static let nextID = Atomic<UInt64>(1)
    private static let slots = ThreadLocal { AccessLogSlot() }

    /// - Parameter methods: the method table's paths, in its order (`CallRecord.methodIndex`).
    init(writer: LogWriter, format: Logger.Format, selection: Selection, methods: [String]) {
        self.writer = writer
        json = format == .json ? 1 : 0
        self.selection = selection
        precondition(selection.sampleEvery >= 1, "sampleEvery must be at least 1")
        id = Self.nextID.add(1, ordering: .relaxed).oldValue
        let statuses = (0...16).map { StatusCode(rawValue: UInt32($0)).name }
        let wires = WireKind.allCases.map(\.rawValue)
        let all = methods + statuses + wires
        names = .allocate(capacity: max(1, all.reduce(0) { $0 + $1.utf8.count }))
        var texts: [cshim_text] = []
        var offset = 0
        for name in all {
            for (index, byte) in name.utf8.enumerated() { names[offset + index] = byte }
            texts.append(cshim_text(bytes: names + offset, count: name.utf8.count))
            offset += name.utf8.count
        }
        methodNames = Array(texts.prefix(methods.count))
        statusNames = Array(texts[methods.count..<methods.count + statuses.count])
        wireNames = Array(texts.suffix(wires.count))
    }

    deinit { names.deallocate() }

    /// Lines dropped because the writer could not keep up (all of its users' lines, in practice
    /// this log's: ordinary lines are never dropped).
    var droppedLines: UInt64 { writer.droppedLines }

    /// Writes `call`'s line, unless the selection leaves it out or the authentication throttle
    /// kept it out (`CallRecord.logged`: a flood of wrong keys is summed up, not logged per call).
    func record(_ call: CallRecord) {
        if !call.logged || (call.isInternal && !selection.includeInternal) { return }
        let slot = Self.slots.value
        if selection.sampleEvery > 1 && call.code == .ok {
            slot.sampled &+= 1
            guard slot.sampled % UInt64(selection.sampleEvery) == 0 else { return }
        }
        let buffer = slot.buffer(for: id, writer: writer)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var line = cshim_access_line()
        line.duration_ns = call.durationNanoseconds
        line.stream = call.streamID
        line.wire = wireNames[call.wire == .grpc ? 1 : 0]
        let code = Int(call.code.rawValue)
        if code < statusNames.count { line.status = statusNames[code] }
        let known = call.methodIndex.flatMap { $0 < methodNames.count ? methodNames[$0] : nil }
        if let known {
            line.method = known
            line.method_is_plain = 1
        }
        let json = self.json
        // The call's own strings, reached one closure each (empty ones need none).
        Self.withBytes(known == nil ? (call.method.isEmpty ? "(none)" : call.method) : "") { method in
            if known == nil { line.method = method }
            Self.withBytes(call.errorCode) { errorCode in
                line.error_code = errorCode
                Self.withBytes(call.appID) { app in
                    line.app = app
                    Self.withBytes(call.peer) { peer in
                        line.peer = peer
                        Self.withBytes(call.onBehalfOf) { onBehalfOf in
                            line.on_behalf_of = onBehalfOf
                            Self.withBytes(call.requestID) { requestID in
                                line.request_id = requestID
                                line.time = slot.timestamp(now)
                                buffer.append(maximumBytes: cshim_access_line_maximum(&line)) { memory in
                                    cshim_format_access_line(memory, &line, json)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// `text`'s UTF-8 bytes for the duration of `body`; an empty string's at once.
    @inline(__always)
    private static func withBytes(_ text: String, _ body: (cshim_text) -> Void) {
        if text.isEmpty { return body(cshim_text(bytes: nil, count: 0)) }
        if text.utf8.withContiguousStorageIfAvailable({ body(cshim_text(bytes: $0.baseAddress, count: $0.count)) })
            == nil
        {
            var copy = text
            copy.withUTF8 { body(cshim_text(bytes: $0.baseAddress, count: $0.count)) }
        }
    }
}

/// A thread's access-log state: its line buffer, its sampling count, and the timestamp of its
/// last line (the time changes its milliseconds far more often than its second).
///
/// Touched only by its own thread (so the exclusivity checks of class properties, a runtime call
/// per access, are left out).
final class AccessLogSlot {
    @exclusivity(unchecked) private var owner: UInt64 = 0
    @exclusivity(unchecked) private var buffer: LineBuffer?
    @exclusivity(unchecked) var sampled: UInt64 = 0
    @exclusivity(unchecked) private var second = -1
    /// `2026-11-29T11:30:00.123Z` (24 bytes): the date and time of `second`, the milliseconds
    /// of the last line.
    private let stamp = UnsafeMutablePointer<UInt8>.allocate(capacity: 24)

    deinit {
        buffer?.abandon()
        stamp.deallocate()
    }

    /// This thread's buffer with `writer`, made (and registered) on first use.
    @inline(__always)
    func buffer(for log: UInt64, writer: LogWriter) -> LineBuffer {
        if owner == log, let buffer { return buffer }
        return replaceBuffer(for: log, writer: writer)
    }

    private func replaceBuffer(for log: UInt64, writer: LogWriter) -> LineBuffer {
        buffer?.abandon()
        let fresh = writer.makeLineBuffer()
        owner = log
        buffer = fresh
        return fresh
    }

    /// `time` as `2026-11-29T11:30:00.123Z`: 24 bytes, valid until the thread's next line.
    @inline(__always)
    func timestamp(_ time: timespec) -> UnsafePointer<UInt8> {
        if time.tv_sec != second {
            second = time.tv_sec
            var text: [UInt8] = []
            LogTime.appendUTCSecond(time.tv_sec, to: &text)
            for (index, byte) in (text + [0x30, 0x30, 0x30, UInt8(ascii: "Z")]).enumerated() { stamp[index] = byte }
        }
        let milliseconds = time.tv_nsec / 1_000_000
        stamp[20] = UInt8(truncatingIfNeeded: 0x30 + milliseconds / 100)
        stamp[21] = UInt8(truncatingIfNeeded: 0x30 + milliseconds / 10 % 10)
        stamp[22] = UInt8(truncatingIfNeeded: 0x30 + milliseconds % 10)
        return UnsafePointer(stamp)
    }
}
