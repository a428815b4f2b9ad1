/// A password checked against a group's hash away from the writer.
struct PasswordProof: Sendable {
    let hash: String
    let matches: Bool
}
