import ModerationMessages
import ProtoBridge

/// Encode + decode of typical messages: encoding in Swift (generated), decoding through the
/// protobuf-c bridge; protobuf-c's packing beside the Swift encoder, for comparison.
enum CodecBenchmarks {
    static func all() -> [Benchmark] {
        let kick = KickMemberRequest(guid: "cometchat-guid-1", uid: "cometchat-uid-2")
        let kickBytes = kick.serializedBytes()
        let members = ListMembersResponse(
            members: (0..<100).map {
                GroupMember(
                    uid: "user-\($0)", name: "Member Number \($0)", avatar: "https://example.com/avatars/\($0).png",
                    scope: $0 == 0 ? .admin : .participant, joinedAt: 1_700_000_000_000 + Int64($0))
            },
            nextCursor: "eyJqIjoxNzAwMDAwMDAwMDk5LCJ1IjoidXNlci05OSJ9")
        let membersBytes = members.serializedBytes()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        return [
            Benchmark(name: "KickMemberRequest encode+decode (\(kickBytes.count) B)", iterations: 1_000_000) {
                buffer.removeAll(keepingCapacity: true)
                kick.encode(appendingTo: &buffer)
                let decoded = try! KickMemberRequest(serializedBytes: buffer)
                return decoded.uid.utf8.count
            },
            Benchmark(name: "KickMemberRequest encode (\(kickBytes.count) B)", iterations: 1_000_000) {
                buffer.removeAll(keepingCapacity: true)
                return kick.encode(appendingTo: &buffer)
            },
            Benchmark(name: "KickMemberRequest encode by protobuf-c (\(kickBytes.count) B)", iterations: 1_000_000) {
                buffer.removeAll(keepingCapacity: true)
                return kick.encodeByProtobufC(appendingTo: &buffer)
            },
            Benchmark(name: "KickMemberRequest decode (\(kickBytes.count) B)", iterations: 1_000_000) {
                (try! KickMemberRequest(serializedBytes: kickBytes)).guid.utf8.count
            },
            Benchmark(name: "ListMembersResponse ×100 encode+decode (\(membersBytes.count) B)", iterations: 20_000) {
                buffer.removeAll(keepingCapacity: true)
                members.encode(appendingTo: &buffer)
                let decoded = try! ListMembersResponse(serializedBytes: buffer)
                return decoded.members.count
            },
            Benchmark(name: "ListMembersResponse ×100 encode (\(membersBytes.count) B)", iterations: 20_000) {
                buffer.removeAll(keepingCapacity: true)
                return members.encode(appendingTo: &buffer)
            },
            Benchmark(
                name: "ListMembersResponse ×100 encode by protobuf-c (\(membersBytes.count) B)", iterations: 20_000
            ) {
                buffer.removeAll(keepingCapacity: true)
                return members.encodeByProtobufC(appendingTo: &buffer)
            },
            Benchmark(name: "ListMembersResponse ×100 decode (\(membersBytes.count) B)", iterations: 20_000) {
                (try! ListMembersResponse(serializedBytes: membersBytes)).members.count
            },
        ]
    }
}
