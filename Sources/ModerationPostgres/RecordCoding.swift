/// Metadata maps and tag lists as the schema keeps them: `text[]` columns (a map as its keys and
/// values in turn, keys sorted), so rows read plainly in psql.
enum RecordCoding {
    static func encode(_ metadata: [String: String]) -> PGValue {
        .textArray(metadata.keys.sorted().flatMap { [$0, metadata[$0]!] })
    }

    static func encode(_ strings: [String]) -> PGValue { .textArray(strings) }

    static func metadata(_ strings: [String]) -> [String: String] {
        var result: [String: String] = [:]
        result.reserveCapacity(strings.count / 2)
        var index = 0
        while index + 1 < strings.count {
            result[strings[index]] = strings[index + 1]
            index += 2
        }
        return result
    }
}
