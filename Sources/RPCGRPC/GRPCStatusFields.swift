import ByteCoding
import GRPCMessages
public import HTTP2Support
import ProtoBridge
public import RPCCore

/// How a call's end travels on gRPC: `grpc-status` and `grpc-message`, and for an error the
/// standard rich error model in `grpc-status-details-bin` — a `google.rpc.Status` with one
/// `google.rpc.ErrorInfo` whose reason is our `ERR_…` code, whose domain is the called service's
/// package and whose metadata are the error's details (`retry_after_ms`, `last_seq`, …), so
/// grpcio's and grpc-go's stock helpers read what our own clients read from `Status`.
public enum GRPCStatusFields {
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

    /// The other way, for a client: the error a call's trailers (or a trailers-only response)
    /// end it with, or nil for `grpc-status: 0`.
    ///
    /// The `ERR_…` code and the details come from the first `google.rpc.ErrorInfo` in
    /// `grpc-status-details-bin` (its reason and metadata), so any server using the standard
    /// rich error model shows them; without one the error has only its code and message. No
    /// `grpc-status` at all is INTERNAL, as gRPC's clients treat it.
    public static func error(from headers: HTTP2HeaderBlock) -> RPCError? {
        guard let statusText = headers.first(named: "grpc-status") else {
            return .internal("the response ended without a grpc-status")
        }
        guard let code = UInt32(statusText) else {
            return .internal("the response's grpc-status \"\(statusText)\" is not a number")
        }
        guard code != 0 else { return nil }
        var error = RPCError(
            code: StatusCode(rawValue: code), errorCode: "",
            message: headers.first(named: "grpc-message").map(GRPCPercentEncoding.decode) ?? "")
        guard let text = headers.first(named: "grpc-status-details-bin"),
            let bytes = try? Base64.decode(text, accepting: [.standard, .urlSafe], padding: .optional),
            let status = try? Google_Rpc_Status(serializedBytes: bytes)
        else { return error }
        if error.message.isEmpty { error.message = status.message }
        for detail in status.details {
            if let info = try? detail.unpack(Google_Rpc_ErrorInfo.self) {
                error.errorCode = info.reason
                error.details = info.metadata
                break
            }
        }
        return error
    }

    /// The error of a response whose `:status` is not 200 (so not gRPC's), by gRPC's mapping of
    /// HTTP statuses.
    public static func error(httpStatus status: String) -> RPCError {
        let code: StatusCode =
            switch status {
            case "400": .internal
            case "401": .unauthenticated
            case "403": .permissionDenied
            case "404": .unimplemented
            case "429", "502", "503", "504": .unavailable
            default: .unknown
            }
        return RPCError(code: code, errorCode: "", message: "the server answered HTTP status \(status)")
    }

    /// The error of a call the server reset (RST_STREAM) before its status.
    public static func error(reset code: HTTP2ErrorCode) -> RPCError {
        switch code {
        case .cancel: .cancelled("the server cancelled the call (RST_STREAM CANCEL)")
        case .refusedStream: .unavailable("the server refused the stream (REFUSED_STREAM); it may be retried")
        case .enhanceYourCalm:
            RPCError(code: .resourceExhausted, errorCode: "", message: "the server reset the stream: ENHANCE_YOUR_CALM")
        default: .internal("the server reset the stream (RST_STREAM \(code))")
        }
    }
}
