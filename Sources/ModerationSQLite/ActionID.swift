/// The rowid of an action: `(appID << 43) | seq`, so that an app's log is one contiguous range.
/// Room for 2^20 apps with 2^43 actions each (three years of 100 000 actions a second).
enum ActionID {
    static let seqBits: Int64 = 43
    static let maxSeq: UInt64 = (1 << 43) - 1
    static let maxApp: Int64 = (1 << 20) - 1

    static func id(appID: Int64, seq: UInt64) -> Int64 { appID << seqBits | Int64(seq) }
    static func seq(_ id: Int64) -> UInt64 { UInt64(id) & maxSeq }
}
