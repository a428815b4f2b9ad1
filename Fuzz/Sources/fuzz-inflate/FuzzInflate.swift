import FuzzSupport
import RPCCore

@main
enum Main {
    static func main() { runFuzzer(fuzzInflate) }
}

/// libFuzzer entry point: the capped raw inflater.
///
/// Input: byte 0 picks the mode (bit 0: stream or independent) and the cap (the other bits); in
/// stream mode byte 1 is the length of each message fed to one inflater (context takeover); the
/// rest is deflate data. Properties:
/// - a success never appends more than the cap, and a failure never more than cap + 1 bytes;
/// - the cap changes only whether inflating succeeds, never what it produces: a capped success
///   equals the uncapped result, and a `.tooLarge` failure means the data really inflates past
///   the cap;
/// - deflating the input with `Deflater` and inflating it gives the input back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInflate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    guard size >= 2 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let streamMode = input[0] & 1 == 1
    let caps = [0, 1, 7, 64, 1000, 4096, 65_536, 100_000]
    let cap = caps[Int(input[0] >> 1) % caps.count]
    if streamMode {
        let messageLength = max(1, Int(input[1]))
        let body = Array(input[2...])
        let messages = stride(from: 0, to: body.count, by: messageLength).map {
            Array(body[$0..<min($0 + messageLength, body.count)])
        }
        checkStream(messages, cap: cap)
        checkStreamRoundTrip(messages)
    } else {
        let body = Array(input[1...])
        checkIndependent(body, cap: cap)
        checkIndependentRoundTrip(body)
    }
    return 0
}

/// Above every cap: "uncapped". Larger outputs (up to ~1030× the input) only cost time.
private let uncapped = 128 * 1024

/// Contexts kept across inputs, as the server keeps one inflater per thread for request bodies
/// (libFuzzer calls the entry point on one thread only, hence `nonisolated(unsafe)`).
nonisolated(unsafe) private let sharedInflater = Inflater()
nonisolated(unsafe) private let sharedDeflater = Deflater()

private func inflateIndependent(_ body: [UInt8], cap: Int, with inflater: Inflater) -> Result<
    [UInt8], Inflater.Failure
> {
    var output: [UInt8] = []
    do throws(Inflater.Failure) {
        try inflater.inflateIndependent(body, limit: cap, appendingTo: &output)
        fuzzCheck(output.count <= cap, "independent: \(output.count) bytes inflated, cap \(cap)")
        return .success(output)
    } catch {
        fuzzCheck(output.count <= cap + 1, "independent: failed having appended \(output.count) bytes, cap \(cap)")
        return .failure(error)
    }
}

private func checkIndependent(_ body: [UInt8], cap: Int) {
    let capped = inflateIndependent(body, cap: cap, with: Inflater())
    let full = inflateIndependent(body, cap: uncapped, with: sharedInflater)
    compare(capped, full, cap: cap, what: "independent")
    // A reused inflater (reset between bodies, whatever came before) behaves like a fresh one.
    let reused = inflateIndependent(body, cap: cap, with: sharedInflater)
    fuzzCheck(sameOutcome(reused, capped), "independent: a reused inflater gave \(reused), a fresh one \(capped)")
}

private func checkStream(_ messages: [[UInt8]], cap: Int) {
    let capped = Inflater()
    let full = Inflater()
    for (index, message) in messages.enumerated() {
        var cappedOutput: [UInt8] = []
        var fullOutput: [UInt8] = []
        let cappedResult = Result { () throws(Inflater.Failure) in
            try capped.inflateStreamMessage(message, limit: cap, appendingTo: &cappedOutput)
            return cappedOutput
        }
        let fullResult = Result { () throws(Inflater.Failure) in
            try full.inflateStreamMessage(message, limit: uncapped, appendingTo: &fullOutput)
            return fullOutput
        }
        if case .success(let bytes) = cappedResult {
            fuzzCheck(bytes.count <= cap, "stream message \(index): \(bytes.count) bytes inflated, cap \(cap)")
        } else {
            fuzzCheck(
                cappedOutput.count <= cap + 1,
                "stream message \(index): failed having appended \(cappedOutput.count) bytes, cap \(cap)")
        }
        compare(cappedResult, fullResult, cap: cap, what: "stream message \(index)")
        // After a failure the connection is closed: the stream's state no longer matters.
        guard case .success = cappedResult else { return }
    }
}

/// The cap decides only success or failure, never the bytes.
private func compare(
    _ capped: Result<[UInt8], Inflater.Failure>, _ full: Result<[UInt8], Inflater.Failure>, cap: Int, what: String
) {
    switch (capped, full) {
    case (.success(let a), .success(let b)):
        fuzzCheck(sameBytes(a, b), "\(what): capped output (\(a.count) bytes) differs from uncapped (\(b.count) bytes)")
    case (.success(let a), .failure(let error)):
        fuzzCheck(false, "\(what): succeeded with cap \(cap) (\(a.count) bytes) but failed uncapped: \(error)")
    case (.failure(.tooLarge), .success(let b)):
        fuzzCheck(b.count > cap, "\(what): refused as over the cap \(cap), but inflates to \(b.count) bytes")
    case (.failure(.tooLarge), .failure), (.failure(.corrupt), _):
        // Corrupt data may be detected after the capped run stopped, or only by the capped run
        // when the corruption lies past the cap: nothing to compare.
        break
    }
}

private func sameOutcome(_ a: Result<[UInt8], Inflater.Failure>, _ b: Result<[UInt8], Inflater.Failure>) -> Bool {
    switch (a, b) {
    case (.success(let x), .success(let y)): sameBytes(x, y)
    case (.failure(let x), .failure(let y)): x == y
    default: false
    }
}

/// What our deflater writes as a stream (context takeover), our inflater reads back unchanged.
private func checkStreamRoundTrip(_ messages: [[UInt8]]) {
    let deflater = Deflater()
    let inflater = Inflater()
    for message in messages {
        var compressed: [UInt8] = []
        message.withUnsafeBytes { deflater.compressStreamMessage($0, appendingTo: &compressed) }
        var output: [UInt8] = []
        do throws(Inflater.Failure) {
            try inflater.inflateStreamMessage(compressed, limit: message.count, appendingTo: &output)
        } catch {
            fuzzCheck(false, "stream round trip of \(message.count) bytes failed: \(error)")
        }
        fuzzCheck(sameBytes(output, message), "stream round trip changed \(message.count) bytes into \(output.count)")
    }
}

/// What our deflater writes as one body, our inflater reads back unchanged, at a cap of its size.
private func checkIndependentRoundTrip(_ body: [UInt8]) {
    var compressed: [UInt8] = []
    body.withUnsafeBytes { sharedDeflater.compressIndependent($0, appendingTo: &compressed) }
    var output: [UInt8] = []
    do throws(Inflater.Failure) {
        try sharedInflater.inflateIndependent(compressed, limit: body.count, appendingTo: &output)
    } catch {
        fuzzCheck(false, "independent round trip of \(body.count) bytes failed: \(error)")
    }
    fuzzCheck(sameBytes(output, body), "independent round trip changed \(body.count) bytes into \(output.count)")
}
