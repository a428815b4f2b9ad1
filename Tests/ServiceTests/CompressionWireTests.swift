import ModerationMessages
import ProtoBridge
import RPCCore
import RPCMessages
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// A compressed `Subscribe` stream, captured frame by frame from a raw socket, inflates with an
    /// independent inflater (Python's zlib, one context per stream, `00 00 FF FF` appended to each
    /// compressed message) to exactly the bytes an uncompressed subscription receives.
    @Suite("Compressed event stream", .onEveryStore)
    struct CompressionWireTests {
        /// A realistic app: users with names and avatars, groups with descriptions, tags and
        /// metadata, then a mixed load of joins, kicks, bans with reasons, scope changes and updates.
        static func populate(_ server: ModerationTestServer) throws -> [String] {
            let app = try server.client()
            let first = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
            let last = ["Johnson", "Smith", "Nguyen", "Garcia", "Okafor"]
            var users: [String] = []
            for index in 0..<30 {
                let uid = "user-\(1000 + index)"
                try app.createUser(
                    uid, name: "\(first[index % 10]) \(last[index % 5])",
                    avatar: "https://cdn.example.com/avatars/\(uid).png")
                users.append(uid)
            }
            for (index, guid) in groups.enumerated() {
                _ = try app.call(
                    ModerationMethods.createGroup,
                    CreateGroupRequest(
                        guid: guid, name: guid.prefix(1).uppercased() + guid.dropFirst(),
                        icon: "https://cdn.example.com/icons/\(guid).svg",
                        description: "The \(guid) channel of the workspace: be kind, stay on topic.", type: .public,
                        metadata: ["team": "platform", "region": index % 2 == 0 ? "eu-west" : "us-east"],
                        tags: ["chat", guid],
                        owner: users[index], members: users[10..<16].map { MemberToAdd(uid: $0, scope: .participant) }))
            }
            return users
        }

        static let groups = ["general", "random", "support", "announcements", "dev-team"]

        /// `calls` random mutations of `populate`'s groups.
        static func churn(_ server: ModerationTestServer, users: [String], calls: Int, seed: UInt64) throws {
            let load = WriteLoad(threads: 2, groups: groups, users: users, seed: seed) { try server.connect() }
            load.start()
            waitUntil(timeoutMs: 20_000) { load.callCount >= calls }
            try load.stop()
        }

        /// The MESSAGE payloads (with their COMPRESSED flag) of stream 1 until `count` arrived.
        static func messages(_ connection: RawConnection, count: Int) throws -> [(compressed: Bool, payload: [UInt8])] {
            var out: [(Bool, [UInt8])] = []
            let deadline = Clock.nowMs + 20_000
            while out.count < count {
                let frame = try connection.expectFrame(timeoutMs: max(1, deadline - Clock.nowMs))
                guard frame.streamID == 1 else { continue }
                guard frame.type == .message else {
                    throw TestFailure("stream 1 sent \(frame) after \(out.count) messages")
                }
                out.append((frame.header.isCompressed, frame.payload))
            }
            return out
        }

        @Test(
            "Python's zlib inflates the compressed stream to the uncompressed stream's bytes",
            .enabled(if: Python.isAvailable, "python3 is not installed: the independent-inflater check is skipped"))
        func independentInflater() throws {
            let server = try ModerationTestServer()
            defer { server.tearDown() }
            let users = try Self.populate(server)
            try Self.churn(server, users: users, calls: 300, seed: 7)
            let app = try server.client()
            let middle = try app.markHead(owner: users[0])

            // Both subscribe to the whole app from seq 0: replayed actions, then live ones.
            let compressed = try server.rawOpen(acceptDeflate: true)
            let plain = try server.rawOpen(acceptDeflate: false)
            let request = SubscribeRequest(wholeApp: true, start: .afterSeq(0)).serializedBytes()
            try compressed.send(
                Frames.call(streamID: 1, method: ModerationMethods.subscribe.path, body: request, acceptDeflate: true))
            try plain.send(Frames.call(streamID: 1, method: ModerationMethods.subscribe.path, body: request))
            try Self.churn(server, users: users, calls: 300, seed: 8)
            let head = try app.markHead(owner: users[1])
            #expect(head > middle)

            // The started message, then every action.
            let zipped = try Self.messages(compressed, count: Int(head) + 1)
            let clear = try Self.messages(plain, count: Int(head) + 1)
            #expect(
                clear.allSatisfy { !$0.compressed },
                "a subscription that did not accept deflate gets no compressed frame")
            #expect(zipped.filter(\.compressed).count > zipped.count * 9 / 10, "nearly every message is compressed")

            let inflated = try PythonZlib.inflateStream(zipped)
            #expect(inflated.count == clear.count)
            // The started messages say where each stream registered (their heads may differ:
            // the churn began meanwhile); every action after them is the same, byte for byte.
            #expect(
                Array(inflated.dropFirst()) == clear.dropFirst().map(\.payload),
                "byte for byte the uncompressed stream's SubscribeResponse messages")
            for first in [inflated[0], clear[0].payload] {
                let started = try SubscribeResponse(serializedBytes: first).started
                #expect(started?.afterSeq == 0 && started?.headSeq ?? 0 >= middle, "\(String(describing: started))")
            }
            let seqs = try clear.dropFirst().map { try SubscribeResponse(serializedBytes: $0.payload).action?.seq ?? 0 }
            #expect(seqs == Array(1...head))

            let wire = zipped.reduce(0) { $0 + $1.payload.count }
            let raw = clear.reduce(0) { $0 + $1.payload.count }
            let ratio = Double(wire) / Double(raw)
            print(
                "compression: \(head) events, \(raw) bytes uncompressed, \(wire) bytes compressed on the wire, ratio \(Int(ratio * 1000)) / 1000 (\(raw / Int(head)) → \(wire / Int(head)) bytes per event)"
            )
            #expect(ratio < 0.5, "context takeover should at least halve a stream of similar events")
        }

        @Test("the client library's inflater agrees: a compressed EventRecorder gets the same actions")
        func clientInflater() throws {
            let cast = try Cast()
            defer { cast.tearDown() }
            let zipped = cast.app.subscribe(SubscribeRequest(wholeApp: true, start: .afterSeq(0)), acceptDeflate: true)
            let clear = cast.app.subscribe(SubscribeRequest(wholeApp: true, start: .afterSeq(0)))
            defer {
                zipped.cancel()
                clear.cancel()
            }
            let alice = try cast.user("alice")
            for round in 0..<20 {
                try alice.updateGroup(
                    UpdateGroupRequest(guid: "g", description: "round \(round) of a long description that repeats"))
            }
            let head = try alice.kick("g", "carol").seq
            #expect(zipped.waitForSeq(head) && clear.waitForSeq(head))
            #expect(zipped.compressedMessages > 0 && clear.compressedMessages == 0)
            #expect(zipped.bodies == clear.bodies && zipped.undecodable == 0)
            #expect(zipped.wireBytes < clear.wireBytes / 2)
        }
    }
}
