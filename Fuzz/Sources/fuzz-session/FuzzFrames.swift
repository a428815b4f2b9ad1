import RPCCore
import RPCMessages

/// What a client sends first, and the key the fuzzing authenticator accepts.
enum FuzzFrames {
    static let apiKey = "fuzz-key"
    static let appID = "fuzz-app"

    /// The preface followed by a valid HELLO.
    static func opening(acceptDeflate: Bool) -> [UInt8] {
        var bytes = Preface.bytes
        let hello = Hello(
            apiKey: apiKey, clientName: "fuzzer", acceptEncodings: acceptDeflate ? ["deflate"] : [], appID: "")
        FrameWriter.hello(hello, into: &bytes)
        return bytes
    }
}

/// Accepts only `FuzzFrames.apiKey`, for `FuzzFrames.appID`.
struct FuzzAuthenticator: Authenticator {
    func authenticate(apiKey: String, appID: String) -> String? {
        guard apiKey == FuzzFrames.apiKey, appID.isEmpty || appID == FuzzFrames.appID else { return nil }
        return FuzzFrames.appID
    }
}
