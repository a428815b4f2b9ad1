import RPCCore

extension ClientConnection {
    /// The reader thread's inflate contexts: one per compressed stream (a stream's messages share
    /// one deflate context), one for every compressed REPLY (each inflated on its own).
    final class Inflaters: @unchecked Sendable {
        // Invariant: used only on the connection's reader thread.
        private var streams: [UInt32: Inflater] = [:]
        let unary = Inflater()

        /// The inflater of a stream, made at its first compressed message.
        func stream(_ streamID: UInt32) -> Inflater {
            if let existing = streams[streamID] { return existing }
            let inflater = Inflater()
            streams[streamID] = inflater
            return inflater
        }

        var hasStreams: Bool { !streams.isEmpty }

        func drop(streamID: UInt32) { streams[streamID] = nil }

        func drop(where ended: (UInt32) -> Bool) {
            for id in streams.keys where ended(id) { streams[id] = nil }
        }
    }
}
