import ProtoSchema
import RPCCore
import RPCMessages
import RPCPosix
internal import Glibc

/// Where rpc-probe gets the schema: a `--protoset` file, or the server's reflection service.
enum SchemaLoader {
    static func load(_ options: ProbeOptions, connection: () throws(ProbeError) -> ClientConnection) throws(ProbeError) -> Schema {
        let bytes: [UInt8]
        if let path = options.protoset {
            guard let data = readFile(path) else { throw .failure("cannot read --protoset \(path)") }
            bytes = data
        } else {
            let client = try connection()
            do throws(RPCError) {
                bytes = try client.unary(ReflectionService.getFileDescriptorSet, GetFileDescriptorSetRequest(),
                                         options: options.callOptions()).fileDescriptorSet
            } catch {
                throw .call(error)
            }
        }
        do {
            return try Schema(fileDescriptorSet: bytes)
        } catch {
            throw .failure("the descriptor set is not valid: \(error)")
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
}
