/// Python's zlib as the independent implementation that the runtime's raw deflate streams are
/// checked against: one context per stream, each message sync-flushed with its `00 00 FF FF`
/// tail stripped on the wire (PROTOCOL.md's per-stream compression).
public enum PythonZlib {
    /// Inflates a stream's messages through one raw-deflate context (window 2^15), appending the
    /// stripped tail to each compressed one; uncompressed messages pass through as they are.
    /// - Throws: `TestFailure` when python3 is missing or zlib refuses the data.
    public static func inflateStream(_ messages: [(compressed: Bool, payload: [UInt8])]) throws -> [[UInt8]] {
        let records = messages.map { [UInt8]([$0.compressed ? 1 : 0]) + $0.payload }
        return try LengthPrefixed.decode(Python.run(inflateScript, input: LengthPrefixed.encode(records)))
    }

    /// Deflates `messages` as one stream (level 6, window 2^15), each sync-flushed, tail stripped.
    /// - Throws: `TestFailure` when python3 is missing or a flush does not end with the tail.
    public static func deflateStream(_ messages: [[UInt8]]) throws -> [[UInt8]] {
        try LengthPrefixed.decode(Python.run(deflateScript, input: LengthPrefixed.encode(messages)))
    }

    /// Each message compressed whole by Python's `gzip.compress` or `zlib.compress` (gRPC's
    /// `gzip` and `deflate` message encodings).
    public static func compressWhole(_ messages: [[UInt8]], gzip: Bool) throws -> [[UInt8]] {
        try eachWhole(messages, function: gzip ? "gzip.compress" : "zlib.compress")
    }

    /// Each message decompressed whole by Python's `gzip.decompress` or `zlib.decompress`.
    public static func decompressWhole(_ messages: [[UInt8]], gzip: Bool) throws -> [[UInt8]] {
        try eachWhole(messages, function: gzip ? "gzip.decompress" : "zlib.decompress")
    }

    /// `function` of Python's gzip or zlib applied to each message on its own.
    private static func eachWhole(_ messages: [[UInt8]], function: String) throws -> [[UInt8]] {
        let script = """
            import sys, zlib, gzip
            data = open(sys.argv[1], 'rb').read()
            out = open(sys.argv[2], 'wb')
            i = 0
            while i < len(data):
                n = int.from_bytes(data[i:i + 4], 'big'); i += 4
                m = \(function)(data[i:i + n]); i += n
                out.write(len(m).to_bytes(4, 'big') + m)
            """
        return try LengthPrefixed.decode(Python.run(script, input: LengthPrefixed.encode(messages)))
    }

    /// Reads `u32 length, flag byte, payload` records; writes `u32 length, message` records.
    private static let inflateScript = """
        import sys, zlib
        data = open(sys.argv[1], 'rb').read()
        out = open(sys.argv[2], 'wb')
        d = zlib.decompressobj(-15)
        i = 0
        while i < len(data):
            n = int.from_bytes(data[i:i + 4], 'big'); i += 4
            flag, payload = data[i], data[i + 1:i + n]; i += n
            m = d.decompress(payload + b'\\x00\\x00\\xff\\xff') if flag & 1 else payload
            out.write(len(m).to_bytes(4, 'big') + m)
        """

    /// Reads and writes `u32 length, message` records.
    private static let deflateScript = """
        import sys, zlib
        data = open(sys.argv[1], 'rb').read()
        out = open(sys.argv[2], 'wb')
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        i = 0
        while i < len(data):
            n = int.from_bytes(data[i:i + 4], 'big'); i += 4
            m = c.compress(data[i:i + n]) + c.flush(zlib.Z_SYNC_FLUSH); i += n
            assert m.endswith(b'\\x00\\x00\\xff\\xff')
            m = m[:-4]
            out.write(len(m).to_bytes(4, 'big') + m)
        """
}
