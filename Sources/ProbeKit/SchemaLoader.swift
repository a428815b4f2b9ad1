internal import Glibc
import ProtoBridge
import ProtoSchema
import RPCCore
import RPCMessages
import RPCPosix

/// Where rpc-probe gets the schema: `--protoset` files, or the server's reflection service.
enum SchemaLoader {
    /// The schema from `options.protosets` and `options.protoFiles` (through protoc) when there
    /// are any, else from the server's reflection (`fetch`: ours, or gRPC's with `--grpc`).
    static func load(_ options: ProbeOptions, fetch: () throws(ProbeError) -> [UInt8]) throws(ProbeError)
        -> Schema
    {
        var sets: [[UInt8]] = []
        if !options.hasSchemaFiles {
            sets = [try fetch()]
        } else {
            for path in options.protosets {
                guard let data = readFile(path) else {
                    throw .failure("cannot read --protoset \(path): \(errorText())")
                }
                sets.append(data)
            }
            if !options.protoFiles.isEmpty {
                sets.append(
                    try ProtoCompiler.descriptorSet(files: options.protoFiles, importPaths: options.importPaths))
            }
        }
        do throws(ProtoSchemaError) {
            return try Schema(fileDescriptorSets: sets)
        } catch {
            let source =
                !options.hasSchemaFiles
                ? "the server's reflection" : options.protosets.isEmpty ? "-proto" : "--protoset"
            throw .failure("the descriptor set from \(source) is not valid: \(error.message)")
        }
    }

    /// The serialized `FileDescriptorSet` the server reflects.
    /// - Throws: the call's status; UNIMPLEMENTED says that the server has no reflection and how
    ///   to go on without it.
    static func fetchDescriptorSet(from connection: ClientConnection, options: ProbeOptions) throws(ProbeError)
        -> [UInt8]
    {
        do throws(RPCError) {
            return try connection.unary(
                ReflectionMethods.getFileDescriptorSet, GetFileDescriptorSetRequest(),
                options: options.callOptions()
            ).fileDescriptorSet
        } catch {
            var failure = error
            if error.code == .unimplemented {
                failure.message =
                    "the server does not support reflection (\(ReflectionMethods.getFileDescriptorSet.path): "
                    + "\(error.message)); give its schema with --protoset FILE, a FileDescriptorSet saved with "
                    + "'rpc-probe HOST:PORT protoset > FILE' from a server that has reflection, or made with "
                    + "'protoc --include_imports --descriptor_set_out=FILE'"
            } else {
                failure.message = "cannot load the schema through reflection: \(error.message)"
            }
            throw .call(failure)
        }
    }

    /// The bytes of file `path` ("-" is standard input), or nil when it cannot be read.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { if fd != 0 { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    /// The text of the last system error (after `readFile` returned nil).
    static func errorText() -> String {
        String(cString: strerror(errno))
    }
}
