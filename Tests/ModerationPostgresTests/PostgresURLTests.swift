import ModerationPostgres
import Testing

/// The URL's password never reaches a message.
@Suite("PostgreSQL URL redaction")
struct PostgresURLTests {
    @Test(
        "a password is replaced by ***, in every form libpq accepts",
        arguments: [
            ("postgresql://app:secret@db:5432/moderation", "postgresql://app:***@db:5432/moderation"),
            ("postgres://app:p%40ss@db/moderation?sslmode=require", "postgres://app:***@db/moderation?sslmode=require"),
            ("postgresql://app@db:5432/moderation", "postgresql://app@db:5432/moderation"),
            ("postgresql://db/moderation?user=app&password=secret", "postgresql://db/moderation?user=app&password=***"),
            ("host=db user=app password=secret dbname=moderation", "host=db user=app password=*** dbname=moderation"),
            ("postgresql://app:a:b@c@db/x", "postgresql://app:***@db/x"),
        ])
    func redacted(_ url: String, _ expected: String) {
        #expect(PostgresURL.redacted(url) == expected)
    }
}
