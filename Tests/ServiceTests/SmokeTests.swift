import ModerationMessages
import TestSupport
import Testing

@Suite("Smoke")
struct SmokeTests {
    @Test func createAndRead() throws {
        let server = try ModerationTestServer()
        defer { server.tearDown() }
        let app = try server.client()
        try app.createUser("alice")
        try app.createGroup("g", owner: "alice")
        #expect(try app.getGroup("g").owner == "alice")
    }
}
