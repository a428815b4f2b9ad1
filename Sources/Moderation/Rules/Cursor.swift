import ByteCoding

/// The opaque paging cursors: unpadded base64url of a version byte, a tag naming the list, and
/// the keyset position (varints and length-prefixed strings).
///
/// A cursor of another list, or anything that does not decode, is `ERR_INVALID_ARGUMENT`; the
/// base64 must be as the encoder writes it (no padding, no `+` or `/`, no stray bits).
enum Cursor {
    private static let version: UInt8 = 1
    private enum Tag: UInt8 {
        case members = 0x6D // "m"
        case bans = 0x62 // "b"
        case groups = 0x67 // "g"
        case actions = 0x61 // "a"
        case invites = 0x69 // "i"
        case myInvites = 0x76 // "v"
        case joinRequests = 0x6B // "k"
        case reports = 0x72 // "r"
        case appBans = 0x42 // "B"
        case contentRules = 0x63 // "c"
    }

    static func encode(_ key: MemberKey) -> String { encode(.members, key.joinedAt, key.uid) }
    static func encode(_ key: BanKey) -> String { encode(.bans, key.bannedAt, key.uid) }
    static func encode(_ key: GroupKey) -> String { encode(.groups, key.createdAt, key.guid) }
    static func encode(invites key: InviteKey) -> String { encode(.invites, key.invitedAt, key.id) }
    static func encode(myInvites key: InviteKey) -> String { encode(.myInvites, key.invitedAt, key.id) }
    static func encode(appBans key: BanKey) -> String { encode(.appBans, key.bannedAt, key.uid) }
    static func encode(joinRequests key: MemberKey) -> String { encode(.joinRequests, key.joinedAt, key.uid) }
    static func encode(reportID id: UInt64) -> String { encode(id: id, .reports) }
    static func encode(contentRuleID id: UInt64) -> String { encode(id: id, .contentRules) }
    static func encode(afterSeq seq: UInt64) -> String { encode(id: seq, .actions) }

    static func memberKey(_ cursor: String) throws(ModerationError) -> MemberKey? {
        try key(.members, cursor, MemberKey.init(joinedAt:uid:))
    }

    static func banKey(_ cursor: String) throws(ModerationError) -> BanKey? {
        try key(.bans, cursor, BanKey.init(bannedAt:uid:))
    }

    static func appBanKey(_ cursor: String) throws(ModerationError) -> BanKey? {
        try key(.appBans, cursor, BanKey.init(bannedAt:uid:))
    }

    static func groupKey(_ cursor: String) throws(ModerationError) -> GroupKey? {
        try key(.groups, cursor, GroupKey.init(createdAt:guid:))
    }

    static func inviteKey(_ cursor: String) throws(ModerationError) -> InviteKey? {
        try key(.invites, cursor, InviteKey.init(invitedAt:id:))
    }

    static func myInviteKey(_ cursor: String) throws(ModerationError) -> InviteKey? {
        try key(.myInvites, cursor, InviteKey.init(invitedAt:id:))
    }

    static func joinRequestKey(_ cursor: String) throws(ModerationError) -> MemberKey? {
        try key(.joinRequests, cursor, MemberKey.init(joinedAt:uid:))
    }

    static func reportID(_ cursor: String) throws(ModerationError) -> UInt64? { try id(.reports, cursor) }
    static func contentRuleID(_ cursor: String) throws(ModerationError) -> UInt64? { try id(.contentRules, cursor) }
    static func afterSeq(_ cursor: String) throws(ModerationError) -> UInt64? { try id(.actions, cursor) }

    private static func encode(id: UInt64, _ tag: Tag) -> String {
        var bytes: [UInt8] = [version, tag.rawValue]
        Varint.append(id, to: &bytes)
        return text(bytes)
    }

    /// The id of a cursor of `tag`'s list, which pages by id (the action log: by seq).
    private static func id(_ tag: Tag, _ cursor: String) throws(ModerationError) -> UInt64? {
        guard !cursor.isEmpty else { return nil }
        guard let bytes = Self.bytes(cursor), bytes.count >= 3, bytes[0] == version, bytes[1] == tag.rawValue else {
            throw bad
        }
        var reader = Reader(bytes: bytes, offset: 2)
        guard let id = reader.varint(), reader.atEnd else { throw bad }
        return id
    }

    /// The key of a cursor of `tag`'s list, which pages by a time and an identifier, as `make`
    /// builds it.
    private static func key<Key>(_ tag: Tag, _ cursor: String, _ make: (Int64, String) -> Key) throws(ModerationError)
        -> Key?
    {
        guard !cursor.isEmpty else { return nil }
        let (time, id) = try decode(tag, cursor)
        return make(time, id)
    }

    private static var bad: ModerationError { .invalid("cursor", "not a cursor of this list") }

    private static func encode(_ tag: Tag, _ time: Int64, _ id: String) -> String {
        var bytes: [UInt8] = [version, tag.rawValue]
        Varint.append(UInt64(bitPattern: time), to: &bytes)
        Varint.append(UInt64(id.utf8.count), to: &bytes)
        bytes += id.utf8
        return text(bytes)
    }

    private static func decode(_ tag: Tag, _ cursor: String) throws(ModerationError) -> (Int64, String) {
        guard let bytes = Self.bytes(cursor), bytes.count >= 4, bytes[0] == version, bytes[1] == tag.rawValue else {
            throw bad
        }
        var reader = Reader(bytes: bytes, offset: 2)
        guard let time = reader.varint(), let length = reader.varint(), length <= UInt64(Validation.maxIdentifier),
            let idBytes = reader.take(Int(length)), reader.atEnd
        else { throw bad }
        let id = String(decoding: idBytes, as: UTF8.self)
        guard (try? Validation.identifier(id, field: "cursor")) == id else { throw bad }
        return (Int64(bitPattern: time), id)
    }

    private static func text(_ bytes: [UInt8]) -> String {
        Base64.encode(bytes, alphabet: .urlSafe, padded: false)
    }

    /// The bytes of `cursor`, or nil when it is not canonical unpadded base64url.
    private static func bytes(_ cursor: String) -> [UInt8]? {
        try? Base64.decode(cursor, accepting: .urlSafe, padding: .forbidden, canonical: true)
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset: Int
        var atEnd: Bool { offset == bytes.count }

        mutating func varint() -> UInt64? {
            try? Varint.read(from: bytes, at: &offset)
        }

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }
    }
}
