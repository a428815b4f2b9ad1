import ByteCoding
import GRPCMessages
import ProtoBridge
import RPCCore

/// The schema of any gRPC server with standard reflection (`--grpc`): over one
/// `ServerReflectionInfo` stream, `list_services`, then `file_containing_symbol` for each service,
/// then `file_by_filename` for any import the answers left out, until every file's imports are
/// held — the files become one `FileDescriptorSet`, as `--protoset` and our own reflection give.
///
/// `grpc.reflection.v1` first; a server that only has the older `v1alpha` (same messages, other
/// name) is asked that instead, as grpcurl does.
enum GRPCReflectionClient {
    static let paths = [
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ]

    /// The serialized `FileDescriptorSet` of every service the server lists.
    /// - Throws: the stream's status; UNIMPLEMENTED (no reflection) says how to go on without it.
    static func fileDescriptorSet(
        _ client: GRPCProbeClient, metadata: GRPCProbeClient.Metadata, timeoutMs: UInt32
    ) throws(ProbeError) -> [UInt8] {
        var failure: RPCError?
        for path in paths {
            do throws(RPCError) {
                return try fetch(client, path: path, metadata: metadata, timeoutMs: timeoutMs)
            } catch {
                failure = error
                if error.code != .unimplemented { break }
            }
        }
        var error = failure!
        if error.code == .unimplemented {
            error.message =
                "the server does not support gRPC reflection (\(paths[0]): \(error.message)); give its schema "
                + "with --protoset FILE, e.g. one made with 'protoc --include_imports --descriptor_set_out=FILE'"
        } else {
            error.message = "cannot load the schema through gRPC reflection: \(error.message)"
        }
        throw .call(error)
    }

    private static func fetch(
        _ client: GRPCProbeClient, path: String, metadata: GRPCProbeClient.Metadata, timeoutMs: UInt32
    ) throws(RPCError) -> [UInt8] {
        let stream = try client.start(path: path, metadata: metadata, timeoutMs: timeoutMs)
        defer { client.cancel(stream) }
        func ask(_ request: Grpc_Reflection_V1_ServerReflectionRequest.MessageRequest) throws(RPCError)
            -> Grpc_Reflection_V1_ServerReflectionResponse.MessageResponse?
        {
            try client.send(
                stream, Grpc_Reflection_V1_ServerReflectionRequest(messageRequest: request).serializedBytes(),
                end: false)
            guard let message = try client.next(stream) else {
                throw RPCError.internal("the reflection stream ended before answering")
            }
            do throws(ProtoDecodingError) {
                return try Grpc_Reflection_V1_ServerReflectionResponse(serializedBytes: message.bytes).messageResponse
            } catch {
                throw RPCError.internal("the server sent an \(error.description)")
            }
        }

        guard case .listServicesResponse(let list)? = try ask(.listServices("")) else {
            throw RPCError.internal("the server did not answer list_services with a service list")
        }
        var files: [[UInt8]] = []
        var held: Set<String> = []
        var imports: [String] = []
        func add(_ response: Grpc_Reflection_V1_ServerReflectionResponse.MessageResponse?, for what: String)
            throws(RPCError)
        {
            switch response {
            case .fileDescriptorResponse(let found)?:
                for file in found.fileDescriptorProto {
                    let (name, dependencies) = try header(ofFile: file)
                    guard held.insert(name).inserted else { continue }
                    files.append(file)
                    imports += dependencies
                }
            case .errorResponse(let error)?:
                throw RPCError(
                    code: StatusCode(rawValue: UInt32(bitPattern: error.errorCode)), errorCode: "",
                    message: "reflection of \(what): \(error.errorMessage)")
            default:
                throw RPCError.internal("the server did not answer \(what) with file descriptors")
            }
        }
        for service in list.service.map(\.name).sorted() {
            try add(try ask(.fileContainingSymbol(service)), for: "file_containing_symbol \(service)")
        }
        while let missing = imports.popLast() {
            guard !held.contains(missing) else { continue }
            try add(try ask(.fileByFilename(missing)), for: "file_by_filename \(missing)")
        }
        try? client.send(stream, [], end: true)
        var set: [UInt8] = []
        for file in files {
            set.append(0x0A) // FileDescriptorSet.file, field 1, length-delimited
            Varint.append(UInt64(file.count), to: &set)
            set += file
        }
        return set
    }

    /// A `FileDescriptorProto`'s name (field 1) and imports (field 3), read off the wire without
    /// decoding the rest.
    static func header(ofFile bytes: [UInt8]) throws(RPCError) -> (name: String, dependencies: [String]) {
        guard let header = try? readHeader(bytes), !header.name.isEmpty else {
            throw RPCError.internal("the server sent a FileDescriptorProto that does not decode")
        }
        return header
    }

    private static func readHeader(_ bytes: [UInt8]) throws(Varint.Failure) -> (name: String, dependencies: [String]) {
        var name = ""
        var dependencies: [String] = []
        var index = 0
        while index < bytes.count {
            let key = try Varint.read(from: bytes, at: &index)
            switch key & 7 {
            case 0: _ = try Varint.read(from: bytes, at: &index)
            case 1: index += 8
            case 5: index += 4
            case 2:
                let length = try Varint.read(from: bytes, at: &index)
                guard length <= UInt64(bytes.count - index) else { throw .truncated }
                let end = index + Int(length)
                let text = String(decoding: bytes[index..<end], as: UTF8.self)
                if key >> 3 == 1 { name = text } else if key >> 3 == 3 { dependencies.append(text) }
                index = end
            default: throw .overflow // groups (3, 4) and 6, 7 have no place in a descriptor
            }
        }
        guard index == bytes.count else { throw .truncated }
        return (name, dependencies)
    }
}
