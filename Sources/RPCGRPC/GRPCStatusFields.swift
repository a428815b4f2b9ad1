import ByteCoding
import GRPCMessages
import ProtoBridge
import RPCCore

/// How a call's end travels on gRPC: `grpc-status` and `grpc-message`, and for an error the
/// standard rich error model in `grpc-status-details-bin` — a `google.rpc.Status` with one
/// `google.rpc.ErrorInfo` whose reason is our `ERR_…` code, whose domain is the called service's
/// package and whose metadata are the error's details (`retry_after_ms`, `last_seq`, …), so
/// grpcio's and grpc-go's stock helpers read what our own clients read from `Status`.
enum GRPCStatusFields {
    /// The trailer fields (or the fields of a trailers-only response) ending a call.
    /// - Parameter path: the method called: ErrorInfo's domain is its package.
    static func fields(for error: RPCError?, path: String) -> [(name: String, value: String)] {
        guard let error, error.code != .ok else { return [("grpc-status", "0")] }
        let domain = domain(ofPath: path)
        var fields: [(name: String, value: String)] = [("grpc-status", String(error.code.rawValue))]
        if !error.message.isEmpty { fields.append(("grpc-message", GRPCPercentEncoding.encode(error.message))) }
        fields.append(("grpc-status-details-bin", Base64.encode(details(of: error, domain: domain), padded: false)))
        return fields
    }

    /// The encoded `google.rpc.Status` of `error` (with its ErrorInfo when it has an `ERR_…` code).
    static func details(of error: RPCError, domain: String) -> [UInt8] {
        var status = Google_Rpc_Status(code: Int32(bitPattern: error.code.rawValue), message: error.message)
        if !error.errorCode.isEmpty || !error.details.isEmpty {
            let info = Google_Rpc_ErrorInfo(reason: error.errorCode, domain: domain, metadata: error.details)
            status.details = [Google_Protobuf_Any(packing: info)]
        }
        return status.serializedBytes()
    }

    /// The package of the service `path` names (`/moderation.v1.Moderation/KickMember` →
    /// `moderation.v1`): ErrorInfo's domain. A path that names no package gives `mrpc`.
    static func domain(ofPath path: String) -> String {
        var service = path.utf8[...]
        if service.first == UInt8(ascii: "/") { service = service.dropFirst() }
        if let slash = service.firstIndex(of: UInt8(ascii: "/")) { service = service[..<slash] }
        guard let dot = service.lastIndex(of: UInt8(ascii: ".")), dot != service.startIndex else { return "mrpc" }
        return String(decoding: service[..<dot], as: UTF8.self)
    }
}
