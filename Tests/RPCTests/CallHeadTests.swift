import RPCCore
import Testing

/// `CallHead.normalized`: metadata that names a field of the envelope sets that field, on every
/// wire, and never stays custom metadata; a field and its metadata that disagree refuse the call.
@Suite("CallHead: metadata that names an envelope field")
struct CallHeadTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let head: CallHead
        /// nil: refused with INVALID_ARGUMENT.
        let expected: CallHead?
        var testDescription: String { name }
    }

    static let path = "/moderation.v1.Moderation/KickMember"

    static let cases: [Case] = [
        Case(
            name: "no metadata: unchanged", head: CallHead(path: path, onBehalfOf: "u1"),
            expected: CallHead(path: path, onBehalfOf: "u1")),
        Case(
            name: "x-on-behalf-of sets the acting user",
            head: CallHead(path: path, metadata: ["x-on-behalf-of": "u2", "trace": "t"]),
            expected: CallHead(path: path, onBehalfOf: "u2", metadata: ["trace": "t"])),
        Case(
            name: "names match whatever their case",
            head: CallHead(path: path, metadata: ["X-On-Behalf-Of": "u2"]),
            expected: CallHead(path: path, onBehalfOf: "u2")),
        Case(
            name: "the same user in both places",
            head: CallHead(path: path, onBehalfOf: "u2", metadata: ["x-on-behalf-of": "u2"]),
            expected: CallHead(path: path, onBehalfOf: "u2")),
        Case(
            name: "two users: refused",
            head: CallHead(path: path, onBehalfOf: "u4", metadata: ["x-on-behalf-of": "u2"]), expected: nil),
        Case(
            name: "the idempotency key and the request id too",
            head: CallHead(path: path, metadata: ["x-idempotency-key": "k1", "x-request-id": "r1"]),
            expected: CallHead(path: path, idempotencyKey: "k1", requestID: "r1")),
        Case(
            name: "two idempotency keys: refused",
            head: CallHead(path: path, idempotencyKey: "k0", metadata: ["x-idempotency-key": "k1"]), expected: nil),
    ]

    @Test("normalized", arguments: cases)
    func normalized(_ testCase: Case) {
        do throws(RPCError) {
            let head = try testCase.head.normalized()
            #expect(head == testCase.expected)
        } catch {
            #expect(testCase.expected == nil, "refused: \(error)")
            #expect(error.code == .invalidArgument && error.errorCode == "ERR_INVALID_ARGUMENT", "\(error)")
        }
    }
}
