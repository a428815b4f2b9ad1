import GRPCMessages
import ProtoBridge
import Testing

/// The vendored standard protos (google.rpc, grpc.health.v1, grpc.reflection.v1 and v1alpha)
/// against bytes of the reference encoder, so a stock gRPC client and this bridge agree.
///
/// The fixtures were made with Python's protobuf 4.25 over `protoc --python_out` of `proto/`
/// (`protoc -Iproto --python_out=DIR google/rpc/*.proto grpc/health/v1/health.proto
/// grpc/reflection/v1/reflection.proto grpc/reflection/v1alpha/reflection.proto`), each message
/// built as in the comment above its bytes and written with `SerializeToString(deterministic=True)`
/// (map keys sorted, as the bridge writes them).
@Suite("The standard gRPC protos")
struct StandardProtoTests {
    /// `ErrorInfo(reason="NAME_TOO_LONG", domain="moderation.example",
    /// metadata={"limit": "64", "field": "display_name"})`
    static let errorInfoBytes = hex(
        "0a0d4e414d455f544f4f5f4c4f4e4712126d6f6465726174696f6e2e6578616d706c651a150a056669656c6412"
            + "0c646973706c61795f6e616d651a0b0a056c696d697412023634")

    /// `Status(code=3, message="display name too long", details=[any])` where
    /// `any.Pack(error_info, deterministic=True)` holds the `ErrorInfo` above.
    static let statusBytes = hex(
        "08031215646973706c6179206e616d6520746f6f206c6f6e671a730a28747970652e676f6f676c65617069732e"
            + "636f6d2f676f6f676c652e7270632e4572726f72496e666f12470a0d4e414d455f544f4f5f4c4f4e47121"
            + "26d6f6465726174696f6e2e6578616d706c651a150a056669656c64120c646973706c61795f6e616d651a"
            + "0b0a056c696d697412023634")

    static let errorInfo = Google_Rpc_ErrorInfo(
        reason: "NAME_TOO_LONG", domain: "moderation.example",
        metadata: ["field": "display_name", "limit": "64"])

    @Test func statusWithAnErrorInfoDetailMatchesTheReferenceEncoder() throws {
        let status = Google_Rpc_Status(
            code: 3, message: "display name too long", details: [Google_Protobuf_Any(packing: Self.errorInfo)])
        #expect(status.details[0].typeURL == "type.googleapis.com/google.rpc.ErrorInfo")
        #expect(Self.errorInfo.serializedBytes() == Self.errorInfoBytes)
        #expect(status.serializedBytes() == Self.statusBytes)

        let decoded = try Google_Rpc_Status(serializedBytes: Self.statusBytes)
        #expect(decoded == status)
        #expect(decoded.code == 3 && decoded.message == "display name too long")
        let detail = try #require(decoded.details.first)
        #expect(detail.typeName == "google.rpc.ErrorInfo")
        #expect(detail.holds(Google_Rpc_ErrorInfo.self))
        #expect(try detail.unpack(Google_Rpc_ErrorInfo.self) == Self.errorInfo)
        #expect(try detail.unpack(Google_Rpc_RetryInfo.self) == nil)
        #expect(try Google_Rpc_Status(serializedBytes: decoded.serializedBytes()) == decoded)
    }

    @Test func anyTypeNamesAfterTheLastSlashOnly() throws {
        let custom = Google_Protobuf_Any(packing: Self.errorInfo, typeURLPrefix: "example.com/types/")
        #expect(custom.typeURL == "example.com/types/google.rpc.ErrorInfo")
        #expect(try custom.unpack(Google_Rpc_ErrorInfo.self) == Self.errorInfo)
        #expect(Google_Protobuf_Any(typeURL: "google.rpc.ErrorInfo").holds(Google_Rpc_ErrorInfo.self))
        // A detail that claims ErrorInfo but carries bytes protobuf-c refuses fails to unpack.
        let broken = Google_Protobuf_Any(typeURL: "type.googleapis.com/google.rpc.ErrorInfo", value: [0x0a, 0x05])
        #expect(throws: ProtoDecodingError.self) { try broken.unpack(Google_Rpc_ErrorInfo.self) }
    }

    @Test func errorDetailsWithNestedMessagesRoundTrip() throws {
        let retry = Google_Rpc_RetryInfo(retryDelay: Google_Protobuf_Duration(seconds: 2, nanos: 500_000_000))
        #expect(try Google_Rpc_RetryInfo(serializedBytes: retry.serializedBytes()) == retry)
        let badRequest = Google_Rpc_BadRequest(fieldViolations: [
            .init(
                field: "display_name", description: "at most 64 characters", reason: "TOO_LONG",
                localizedMessage: Google_Rpc_LocalizedMessage(locale: "en-US", message: "Name too long"))
        ])
        #expect(try Google_Rpc_BadRequest(serializedBytes: badRequest.serializedBytes()) == badRequest)
        // A nested message decodes on its own too (protoc-c writes no unpack function for it).
        let violation = Google_Rpc_QuotaFailure.Violation(subject: "app:42", description: "writes per second")
        #expect(try Google_Rpc_QuotaFailure.Violation(serializedBytes: violation.serializedBytes()) == violation)
    }

    /// `HealthCheckResponse(status=…)` for each value: UNKNOWN is the empty message.
    @Test(
        arguments: [
            (Grpc_Health_V1_HealthCheckResponse.ServingStatus.unknown, ""),
            (.serving, "0801"),
            (.notServing, "0802"),
            (.serviceUnknown, "0803"),
        ])
    func healthServingStatusMatchesTheReferenceEncoder(
        status: Grpc_Health_V1_HealthCheckResponse.ServingStatus, expected: String
    ) throws {
        let response = Grpc_Health_V1_HealthCheckResponse(status: status)
        #expect(response.serializedBytes() == hex(expected))
        #expect(try Grpc_Health_V1_HealthCheckResponse(serializedBytes: hex(expected)).status == status)
    }

    @Test func healthRequestAndUnknownStatus() throws {
        // `HealthCheckRequest(service="moderation.v1.Moderation")`
        let bytes = hex("0a186d6f6465726174696f6e2e76312e4d6f6465726174696f6e")
        let request = Grpc_Health_V1_HealthCheckRequest(service: "moderation.v1.Moderation")
        #expect(request.serializedBytes() == bytes)
        #expect(try Grpc_Health_V1_HealthCheckRequest(serializedBytes: bytes) == request)
        // A status a newer peer might send survives as unrecognized.
        let future = try Grpc_Health_V1_HealthCheckResponse(serializedBytes: [0x08, 0x09])
        #expect(future.status == .unrecognized(9))
        #expect(future.serializedBytes() == [0x08, 0x09])
        #expect(Grpc_Health_V1_HealthCheckResponse.ServingStatus.serviceUnknown.protoValueName == "SERVICE_UNKNOWN")
    }

    /// `ServerReflectionRequest(host="localhost:50051", list_services="")`: the empty string is
    /// sent (field 7, length 0), since it is the oneof's member that is set.
    static let listServicesBytes = hex("0a0f6c6f63616c686f73743a35303035313a00")
    /// `ServerReflectionRequest(file_containing_symbol="grpc.health.v1.Health")`
    static let fileContainingSymbolBytes = hex("2215677270632e6865616c74682e76312e4865616c7468")
    /// `ServerReflectionResponse(valid_host="localhost:50051", original_request=<the list_services
    /// request above>, list_services_response=ListServiceResponse(service=[
    /// ServiceResponse(name="grpc.health.v1.Health"), ServiceResponse(name="moderation.v1.Moderation")]))`
    static let listServicesResponseBytes = hex(
        "0a0f6c6f63616c686f73743a353030353112130a0f6c6f63616c686f73743a35303035313a0032350a170a1567"
            + "7270632e6865616c74682e76312e4865616c74680a1a0a186d6f6465726174696f6e2e76312e4d6f646572"
            + "6174696f6e")

    @Test func reflectionV1RequestsAndResponseMatchTheReferenceEncoder() throws {
        typealias Request = Grpc_Reflection_V1_ServerReflectionRequest
        let list = Request(host: "localhost:50051", messageRequest: .listServices(""))
        #expect(list.serializedBytes() == Self.listServicesBytes)
        #expect(try Request(serializedBytes: Self.listServicesBytes) == list)
        let symbol = Request(messageRequest: .fileContainingSymbol("grpc.health.v1.Health"))
        #expect(symbol.serializedBytes() == Self.fileContainingSymbolBytes)
        #expect(try Request(serializedBytes: Self.fileContainingSymbolBytes).messageRequest == symbol.messageRequest)

        let response = Grpc_Reflection_V1_ServerReflectionResponse(
            validHost: "localhost:50051", originalRequest: list,
            messageResponse: .listServicesResponse(
                Grpc_Reflection_V1_ListServiceResponse(service: [
                    .init(name: "grpc.health.v1.Health"), .init(name: "moderation.v1.Moderation"),
                ])))
        #expect(response.serializedBytes() == Self.listServicesResponseBytes)
        #expect(
            try Grpc_Reflection_V1_ServerReflectionResponse(serializedBytes: Self.listServicesResponseBytes) == response
        )
    }

    @Test func reflectionV1AlphaIsTheSameWireFormat() throws {
        typealias Request = Grpc_Reflection_V1alpha_ServerReflectionRequest
        let list = Request(host: "localhost:50051", messageRequest: .listServices(""))
        #expect(list.serializedBytes() == Self.listServicesBytes)
        #expect(try Request(serializedBytes: Self.listServicesBytes) == list)
        let symbol = Request(messageRequest: .fileContainingSymbol("grpc.health.v1.Health"))
        #expect(symbol.serializedBytes() == Self.fileContainingSymbolBytes)
        #expect(try Request(serializedBytes: Self.fileContainingSymbolBytes) == symbol)
        let response = try Grpc_Reflection_V1alpha_ServerReflectionResponse(
            serializedBytes: Self.listServicesResponseBytes)
        #expect(response.originalRequest == list)
        guard case .listServicesResponse(let services) = response.messageResponse else {
            Issue.record("expected list_services_response, got \(String(describing: response.messageResponse))")
            return
        }
        #expect(services.service.map(\.name) == ["grpc.health.v1.Health", "moderation.v1.Moderation"])
    }

    @Test func methodPathsAndStreamingFlags() {
        let check = Grpc_Health_V1_HealthMethods.check
        #expect(check.path == "/grpc.health.v1.Health/Check")
        #expect(!check.clientStreaming && !check.serverStreaming)
        let watch = Grpc_Health_V1_HealthMethods.watch
        #expect(watch.path == "/grpc.health.v1.Health/Watch")
        #expect(!watch.clientStreaming && watch.serverStreaming)
        #expect(Grpc_Health_V1_HealthMethods.list.path == "/grpc.health.v1.Health/List")

        let v1 = Grpc_Reflection_V1_ServerReflectionMethods.serverReflectionInfo
        #expect(v1.path == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
        #expect(v1.clientStreaming && v1.serverStreaming)
        #expect(v1.requestType == "grpc.reflection.v1.ServerReflectionRequest")
        #expect(v1.responseType == "grpc.reflection.v1.ServerReflectionResponse")
        let v1alpha = Grpc_Reflection_V1alpha_ServerReflectionMethods.serverReflectionInfo
        #expect(v1alpha.path == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        #expect(v1alpha.clientStreaming && v1alpha.serverStreaming)

        #expect(
            GRPCSchema.methods.map(\.path) == [
                "/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/List", "/grpc.health.v1.Health/Watch",
                "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            ])
    }
}

/// Bytes from hex digits (the fixtures above).
private func hex(_ digits: String) -> [UInt8] {
    let chars = Array(digits.utf8)
    return stride(from: 0, to: chars.count, by: 2).map {
        UInt8(String(decoding: chars[$0..<$0 + 2], as: UTF8.self), radix: 16)!
    }
}
