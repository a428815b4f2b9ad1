internal import Glibc

/// `-proto FILE` and `-import-path DIR` (grpcurl's flags for a schema from `.proto` sources):
/// runs `protoc`, the protobuf compiler, to turn the files into a `FileDescriptorSet` — the format
/// `--protoset` reads — rather than parsing `.proto` text here.
///
/// `protoc --include_imports --include_source_info --descriptor_set_out=TEMP -I DIR… FILE…`:
/// imports are included so that the set is whole, and source info so that `describe` shows the
/// comments. Without an `-import-path`, protoc looks in the current directory, as grpcurl does.
enum ProtoCompiler {
    /// The serialized `FileDescriptorSet` of `files` and everything they import.
    /// - Throws: a failure saying what protoc said (a missing file, a syntax error), or how to
    ///   get protoc when it is not on PATH.
    static func descriptorSet(files: [String], importPaths: [String]) throws(ProbeError) -> [UInt8] {
        var template = Array("\(temporaryDirectory())/rpc-probe-proto-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { throw .failure("-proto: cannot make a temporary file: \(SchemaLoader.errorText())") }
        close(fd)
        let output = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(output) }
        let arguments =
            ["protoc", "--include_imports", "--include_source_info", "--descriptor_set_out=\(output)"]
            + importPaths.map { "--proto_path=\($0)" } + files
        let (status, errors) = try run(arguments)
        guard status == 0 else {
            let said = errors.split(separator: "\n").prefix(10).joined(separator: "\n  ")
            throw .failure(
                "-proto: protoc could not read \(files.joined(separator: " ")) "
                    + "(exit \(status))\(said.isEmpty ? "" : ":\n  " + said)")
        }
        guard let bytes = SchemaLoader.readFile(output) else {
            throw .failure("-proto: cannot read protoc's output \(output): \(SchemaLoader.errorText())")
        }
        return bytes
    }

    /// Runs `arguments` (found on PATH), its standard error collected; returns its exit status
    /// and what it wrote there.
    private static func run(_ arguments: [String]) throws(ProbeError) -> (status: Int32, errors: String) {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw .failure("-proto: pipe: \(SchemaLoader.errorText())") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        var child: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawnp(&child, arguments[0], &actions, nil, argv, environ)
        close(pipeFDs[1])
        defer { close(pipeFDs[0]) }
        guard spawned == 0 else {
            throw .failure(
                "-proto needs \(arguments[0]), the protobuf compiler, which cannot be run "
                    + "(\(String(cString: strerror(spawned)))): install it (Debian: apt-get install protobuf-compiler; "
                    + "tools/setup does), or give the schema as a FileDescriptorSet with --protoset FILE")
        }
        var errors: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(pipeFDs[0], &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            errors += chunk[0..<n]
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), String(decoding: errors, as: UTF8.self))
    }

    private static func temporaryDirectory() -> String {
        guard let value = getenv("TMPDIR"), value.pointee != 0 else { return "/tmp" }
        return String(cString: value)
    }
}
