import TestSupport

/// The stores an earlier release wrote, kept as SQL text in `Tests/Fixtures` (made by
/// `Tests/Fixtures/make-upgrade-fixtures` from that release's server and rpc-probe), from which
/// the migration tests rebuild a store of that release's schema and upgrade it in place.
public enum UpgradeFixture {
    /// The release before mutes, freezes and user deletion changed the schema (SQLite schema 1, PostgreSQL schema 2).
    public static let previousRelease = "release-152ab0e"
    /// The release with mutes, freezes and user deletion (SQLite schema 2, PostgreSQL schema 3), whose
    /// fixture also holds a muted member, a frozen group ("quiet") and a deleted user ("dora").
    public static let currentRelease = "release-e93ac46"

    /// The SQLite store of `release`: a `sqlite3 .dump` ending with its `user_version`.
    /// - Throws: `TestFailure` when the fixture cannot be read.
    public static func sqlite(_ release: String = previousRelease) throws -> String {
        try TemporaryDirectory.text(ofFile: path(release, "sqlite"))
    }

    /// The PostgreSQL store of `release` (`pg_dump --inserts` of one schema), its schema renamed
    /// to `schema`.
    /// - Throws: `TestFailure` when the fixture cannot be read.
    public static func postgres(_ release: String = previousRelease, schema: String) throws -> String {
        try TemporaryDirectory.text(ofFile: path(release, "postgres"))
            .replacing("CREATE SCHEMA fixture;", with: "CREATE SCHEMA \(schema);")
            .replacing("fixture.", with: "\(schema).")
    }

    private static func path(_ release: String, _ store: String) -> String {
        BuiltProducts.packageRoot + "/Tests/Fixtures/\(release).\(store).sql"
    }
}
