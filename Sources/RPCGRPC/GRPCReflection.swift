public import GRPCMessages
import ProtoBridge
public import RPCCore

/// gRPC server reflection (`grpc.reflection.v1` and `v1alpha`) over the descriptor sets a
/// listener serves, answering as grpc-go's and grpc-java's servers do, so grpcurl, Postman and
/// grpcio-reflection's `ProtoReflectionDescriptorDatabase` can discover the services.
///
/// It answers one request at a time and keeps no state between them: the stream handler calls
/// `respond(to:)` for each message of a `ServerReflectionInfo` stream. Files go out with all
/// their transitive imports every time (as grpc-java does; grpc-go leaves out those already sent
/// on the stream, which clients must merge anyway). Immutable after `init`, so one instance
/// serves every connection.
public final class GRPCReflection: Sendable {
    private let index: ReflectionIndex
    /// The service names to list, sorted and without repeats.
    private let serviceNames: [String]

    /// - Parameters:
    ///   - fileDescriptorSets: serialized `FileDescriptorSet`s, each with its imports; a file
    ///     in several sets is served from the first that has it.
    ///   - services: the full names of the services the listener serves (what `list_services`
    ///     answers; a service without a descriptor is listed but `file_containing_symbol` does
    ///     not find it).
    /// - Throws: `GRPCReflectionError` when a set does not parse or a file's import is in none.
    public init(fileDescriptorSets: [[UInt8]], services: [String]) throws(GRPCReflectionError) {
        index = try ReflectionIndex(fileDescriptorSets: fileDescriptorSets)
        serviceNames = Set(services).sorted()
    }

    public func respond(
        to request: Grpc_Reflection_V1_ServerReflectionRequest
    ) -> Grpc_Reflection_V1_ServerReflectionResponse {
        let query: Query? =
            switch request.messageRequest {
            case .fileByFilename(let name): .fileByFilename(name)
            case .fileContainingSymbol(let symbol): .fileContainingSymbol(symbol)
            case .fileContainingExtension(let request):
                .fileContainingExtension(type: request.containingType, number: request.extensionNumber)
            case .allExtensionNumbersOfType(let type): .allExtensionNumbersOfType(type)
            case .listServices: .listServices
            case nil: nil
            }
        var response = Grpc_Reflection_V1_ServerReflectionResponse(validHost: request.host, originalRequest: request)
        switch answer(query) {
        case .files(let files):
            response.messageResponse = .fileDescriptorResponse(.init(fileDescriptorProto: files))
        case .extensionNumbers(let type, let numbers):
            response.messageResponse = .allExtensionNumbersResponse(
                .init(baseTypeName: type, extensionNumber: numbers))
        case .services(let names):
            response.messageResponse = .listServicesResponse(.init(service: names.map { .init(name: $0) }))
        case .error(let code, let message):
            response.messageResponse = .errorResponse(
                .init(errorCode: Int32(bitPattern: code.rawValue), errorMessage: message))
        }
        return response
    }

    /// The same answers in the older package, which grpcurl and many clients still try first.
    ///
    /// Its messages are v1's under another name, field for field, so the request is read as v1
    /// and v1's answer is read back as v1alpha.
    public func respond(
        to request: Grpc_Reflection_V1alpha_ServerReflectionRequest
    ) -> Grpc_Reflection_V1alpha_ServerReflectionResponse {
        do throws(ProtoDecodingError) {
            let answer = respond(
                to: try Grpc_Reflection_V1_ServerReflectionRequest(serializedBytes: request.serializedBytes()))
            return try Grpc_Reflection_V1alpha_ServerReflectionResponse(serializedBytes: answer.serializedBytes())
        } catch {
            preconditionFailure("grpc.reflection v1alpha no longer reads as v1: \(error)")
        }
    }

    // MARK: - One implementation for both versions

    /// A request of either version (their fields are the same).
    private enum Query {
        case fileByFilename(String)
        case fileContainingSymbol(String)
        case fileContainingExtension(type: String, number: Int32)
        case allExtensionNumbersOfType(String)
        case listServices
    }

    /// A response of either version.
    private enum Answer {
        case files([[UInt8]])
        case extensionNumbers(type: String, numbers: [Int32])
        case services([String])
        case error(StatusCode, String)
    }

    private func answer(_ query: Query?) -> Answer {
        switch query {
        case nil:
            return .error(
                .invalidArgument,
                "the request sets none of file_by_filename, file_containing_symbol, file_containing_extension, "
                    + "all_extension_numbers_of_type, list_services")
        case .listServices:
            return .services(serviceNames)
        case .fileByFilename(let name):
            guard let file = index.fileNamed[name] else {
                return .error(.notFound, "file \"\(name)\" is not among the served descriptors")
            }
            return .files(index.withDependencies(file))
        case .fileContainingSymbol(let symbol):
            guard let found = index.symbols[ReflectionIndex.withoutLeadingDot(symbol)] else {
                return .error(.notFound, "symbol \"\(symbol)\" is not declared in the served descriptors")
            }
            return .files(index.withDependencies(found.file))
        case .fileContainingExtension(let type, let number):
            let extendee = ReflectionIndex.withoutLeadingDot(type)
            if let file = index.extensions[.init(extendee: extendee, number: number)] {
                return .files(index.withDependencies(file))
            }
            let why =
                if index.extensions.isEmpty {
                    "the served protos declare no extensions"
                } else if index.symbols[extendee]?.kind != .message {
                    "no message type \"\(extendee)\" is served"
                } else {
                    "\"\(extendee)\" has no extension \(number)"
                }
            return .error(.notFound, "extension \(number) of \"\(type)\" is not found: \(why)")
        case .allExtensionNumbersOfType(let type):
            let name = ReflectionIndex.withoutLeadingDot(type)
            guard index.symbols[name]?.kind == .message else {
                return .error(.notFound, "message type \"\(type)\" is not declared in the served descriptors")
            }
            return .extensionNumbers(type: type, numbers: index.extensionNumbers(of: name))
        }
    }
}

/// Reflection as the gRPC session serves it: `ServerReflectionInfo` of both versions, one
/// response per request message.
extension GRPCReflection: GRPCBidirectionalService {
    public var paths: [String] {
        [
            Grpc_Reflection_V1_ServerReflectionMethods.serverReflectionInfo.path,
            Grpc_Reflection_V1alpha_ServerReflectionMethods.serverReflectionInfo.path,
        ]
    }

    public func respond(path: String, to message: [UInt8]) throws(RPCError) -> [UInt8] {
        do {
            if path == Grpc_Reflection_V1alpha_ServerReflectionMethods.serverReflectionInfo.path {
                return respond(to: try Grpc_Reflection_V1alpha_ServerReflectionRequest(serializedBytes: message))
                    .serializedBytes()
            }
            return respond(to: try Grpc_Reflection_V1_ServerReflectionRequest(serializedBytes: message))
                .serializedBytes()
        } catch {
            throw RPCError.invalidArgument(error.description).caused(by: error)
        }
    }
}
