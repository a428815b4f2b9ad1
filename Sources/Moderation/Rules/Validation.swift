/// Step 1 of every call: arguments well-formed, else `ERR_INVALID_ARGUMENT` naming the field.
///
/// Lengths are counted in Unicode code points (what most languages call characters).
public enum Validation {
    static let maxIdentifier = 100
    static let maxName = 100
    static let maxURL = 3000
    static let maxDescription = 255
    static let maxMetadataBytes = 5 * 1024
    static let maxTags = 25
    static let maxTag = 100
    static let maxReason = 512
    static let maxReportText = 1000
    static let maxSearch = 100
    static let maxBatch = 100
    static let maxHeaderValue = 256
    static let defaultLimit = 30

    /// A uid or guid: lower-cased, then 1–100 characters of `[a-z0-9_-]`.
    ///
    /// `field` is made only for an error: callers on the hot path (CheckPost's 100 pairs) name
    /// fields with an index.
    public static func identifier(_ raw: String, field: @autoclosure () -> String) throws(ModerationError) -> String {
        // Over the contiguous bytes (small strings too): CheckPost checks 200 of them a call.
        let verdict = raw.utf8.withContiguousStorageIfAvailable(identifierVerdict) ?? identifierVerdict(Array(raw.utf8))
        guard let needsLowering = verdict else {
            throw .invalid(field(), "\"\(printable(raw))\" is not 1–100 characters of [a-z0-9_-]")
        }
        guard needsLowering else { return raw }
        return String(decoding: raw.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// Whether `bytes` are 1–`maxIdentifier` characters of [A-Za-z0-9_-] (nil if not), and if so
    /// whether any is upper-case.
    private static func identifierVerdict(_ bytes: some Collection<UInt8>) -> Bool? {
        guard (1...maxIdentifier).contains(bytes.count) else { return nil }
        var needsLowering = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"),
                UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                needsLowering = true
            default:
                return nil
            }
        }
        return needsLowering
    }

    /// A list of distinct identifiers, 1–`max` long (after lower-casing); `noun` names them in
    /// the error.
    static func identifiers(
        _ raw: [String], field: String, allowEmpty: Bool = false, max: Int = maxBatch, noun: String = "uids"
    ) throws(ModerationError) -> [String] {
        try count(raw.count, field: field, allowEmpty: allowEmpty, max: max, noun: noun)
        var seen = Set<String>()
        var result: [String] = []
        result.reserveCapacity(raw.count)
        for value in raw {
            let uid = try identifier(value, field: field)
            guard seen.insert(uid).inserted else { throw .invalid(field, "\(uid) is listed twice") }
            result.append(uid)
        }
        return result
    }

    /// A list's length: 1–`max` (0–`max` with `allowEmpty`); `noun` names what it lists in the
    /// error.
    static func count(_ count: Int, field: String, allowEmpty: Bool = false, max: Int, noun: String)
        throws(ModerationError)
    {
        guard count <= max, allowEmpty || count > 0 else {
            throw .invalid(field, "give \(allowEmpty ? 0 : 1)–\(max) \(noun) (got \(count))")
        }
    }

    /// The users to add or invite (`members`), their uids checked as `identifiers` checks them,
    /// each with the scope asked for.
    static func grants(_ members: [MemberGrant], allowEmpty: Bool = false) throws(ModerationError) -> [MemberGrant] {
        let uids = try identifiers(members.map(\.uid), field: "members", allowEmpty: allowEmpty)
        return zip(uids, members).map { MemberGrant(uid: $0, scope: $1.scope) }
    }

    /// Text of at most `max` characters (and at least `min`).
    static func text(_ value: String, field: String, max: Int, min: Int = 0) throws(ModerationError) {
        let bytes = value.utf8.count
        if bytes >= min && bytes <= max { return } // fast path: byte count bounds the scalar count
        let scalars = value.unicodeScalars.count
        guard scalars >= min && scalars <= max else {
            throw .invalid(field, min > 0 ? "must be \(min)–\(max) characters" : "must be at most \(max) characters")
        }
    }

    /// Metadata: non-empty keys, at most 5 KB of keys and values in all.
    static func metadata(_ metadata: [String: String], field: String = "metadata") throws(ModerationError) {
        var total = 0
        for (key, value) in metadata {
            guard !key.isEmpty else { throw .invalid(field, "keys must not be empty") }
            total += key.utf8.count + value.utf8.count
        }
        guard total <= maxMetadataBytes else {
            throw .invalid(field, "is \(total) bytes; at most \(maxMetadataBytes) allowed")
        }
    }

    /// Tags: at most 25, each 1–100 characters, no duplicates.
    static func tags(_ tags: [String]) throws(ModerationError) {
        guard tags.count <= maxTags else { throw .invalid("tags", "at most \(maxTags) tags (got \(tags.count))") }
        var seen = Set<String>()
        for tag in tags {
            try text(tag, field: "tags", max: maxTag, min: 1)
            guard seen.insert(tag).inserted else { throw .invalid("tags", "\"\(printable(tag))\" is listed twice") }
        }
    }

    /// A ban's or mute's `reason` (at most 512 characters) and `duration_ms`: 0
    /// (`meaningOfZero`) or up to 100 years.
    static func sanction(reason: String, durationMs: Int64, meaningOfZero: String) throws(ModerationError) {
        try text(reason, field: "reason", max: maxReason)
        guard durationMs >= 0, durationMs <= 100 * 365 * 86_400_000 else {
            throw .invalid(
                "duration_ms", "must be 0 (\(meaningOfZero)) or a positive number of milliseconds up to 100 years")
        }
    }

    /// An invite's `expires_in_ms`: 0 for the default of 7 days, else up to 30 days; returns the
    /// lifetime to use.
    static func inviteLifetime(_ expiresInMs: Int64) throws(ModerationError) -> Int64 {
        if expiresInMs == 0 { return ModerationService.defaultInviteLifetimeMs }
        guard expiresInMs > 0, expiresInMs <= ModerationService.maxInviteLifetimeMs else {
            throw .invalid(
                "expires_in_ms",
                "must be 0 (7 days) or a positive number of milliseconds up to 30 days (got \(expiresInMs))")
        }
        return expiresInMs
    }

    /// A page size: 0 means the default of 30, else 1–100.
    static func limit(_ limit: Int) throws(ModerationError) -> Int {
        if limit == 0 { return defaultLimit }
        guard (1...maxBatch).contains(limit) else {
            throw .invalid("limit", "must be 1–\(maxBatch), or 0 for \(defaultLimit) (got \(limit))")
        }
        return limit
    }

    /// A search keyword, folded; at most 100 characters.
    static func search(_ keyword: String) throws(ModerationError) -> String {
        try text(keyword, field: "search", max: maxSearch)
        return TextFolding.fold(keyword)
    }

    /// `value` safe to quote in a message: control characters replaced, at most 100 characters.
    static func printable(_ value: String) -> String {
        String(
            String.UnicodeScalarView(
                value.unicodeScalars.prefix(maxIdentifier).map {
                    $0.properties.generalCategory == .control ? "?" : $0
                }))
    }
}
