import Testing

@testable import Moderation

/// A cursor is exactly the text the encoder writes: anything else is refused, not read loosely.
@Suite("Paging cursors")
struct CursorTests {
    @Test func keysRoundTrip() throws {
        #expect(
            try Cursor.memberKey(Cursor.encode(MemberKey(joinedAt: -5, uid: "user-1")))
                == MemberKey(joinedAt: -5, uid: "user-1"))
        #expect(try Cursor.banKey(Cursor.encode(BanKey(bannedAt: .max, uid: "u"))) == BanKey(bannedAt: .max, uid: "u"))
        #expect(
            try Cursor.groupKey(Cursor.encode(GroupKey(createdAt: .min, guid: "g")))
                == GroupKey(createdAt: .min, guid: "g"))
        for seq: UInt64 in [0, 127, 128, .max] { #expect(try Cursor.afterSeq(Cursor.encode(afterSeq: seq)) == seq) }
        #expect(try Cursor.memberKey("") == nil, "no cursor: the first page")
    }

    @Test(
        "action-log cursors: accepted as written",
        arguments: [
            ("AWEF", 5), // version 1, "a", varint 5
            ("AWH_AQ", 255), // '_' of the URL-safe alphabet
            ("AWH___________8B", .max), // a ten-byte varint
        ] as [(String, UInt64)])
    func accepted(_ text: String, _ seq: UInt64) throws {
        #expect(try Cursor.afterSeq(text) == seq)
    }

    @Test(
        "action-log cursors: refused",
        arguments: [
            "AWH/AQ", // '/' of the standard alphabet
            "AWH_AQ==", // padding
            "AWH_AR", // stray bits in the last character
            "AWH___________8C", // a varint with bits past 64
            "AWGAgICAgICAgICAAA", // an eleven-byte varint
            "AWEFAA", // a byte after the position
            "AWE", // no position
            "AWGA", // a truncated varint
        ])
    func refused(_ text: String) {
        #expect(throws: ModerationError.self) { try Cursor.afterSeq(text) }
    }
}
