/// The `-d` argument: inline JSON, `@FILE`, or `@-` (or grpcurl's bare `@`) for standard input.
enum RequestData {
    static func read(_ argument: String) throws(ProbeError) -> String {
        guard argument.hasPrefix("@") else { return argument }
        let path = argument == "@" ? "-" : String(argument.dropFirst())
        guard let bytes = SchemaLoader.readFile(path) else {
            throw .failure("-d: cannot read \(path == "-" ? "standard input" : path): \(SchemaLoader.errorText())")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
