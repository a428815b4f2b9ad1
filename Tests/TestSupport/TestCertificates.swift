public import TLSSupport

/// A throwaway PKI made for one test with the `openssl` command line: two CAs, and for each a
/// server certificate (for `localhost` and 127.0.0.1) and a client certificate, all EC P-256,
/// valid for two days. Nothing is committed: every key is made here and removed with the
/// directory.
///
/// The second CA stands for "someone else's": a client trusting the first refuses the second's
/// server certificate, and a reload to the second's certificate shows which one a connection got.
public final class TestCertificates: Sendable {
    /// The PEM files of one CA's certificates.
    public struct Authority: Sendable {
        public let certificate: String
        public let serverCertificate: String
        public let serverKey: String
        public let clientCertificate: String
        public let clientKey: String
    }

    public let directory: TemporaryDirectory
    /// The CA the servers of most tests present.
    public let main: Authority
    /// Another CA, unrelated to `main`.
    public let other: Authority

    /// Makes both CAs and their certificates.
    /// - Throws: `TestFailure` when `openssl` is missing or fails.
    public init() throws {
        directory = TemporaryDirectory(prefix: "mrpc-tls")
        do {
            main = try Self.authority("main", in: directory)
            other = try Self.authority("other", in: directory)
        } catch {
            directory.remove()
            throw error
        }
    }

    deinit { directory.remove() }

    /// The path of a file in the directory.
    public func path(_ name: String) -> String { directory.path + "/" + name }

    /// Copies `source` (a file of this directory) to the file `name` in it, replacing it;
    /// returns its path.
    @discardableResult
    public func copy(_ source: String, to name: String) throws -> String {
        precondition(source.hasPrefix(directory.path + "/"), "\(source) is not in \(directory.path)")
        let text = try directory.read(String(source.dropFirst(directory.path.count + 1)))
        return try directory.write(Array(text.utf8), to: name)
    }

    /// A server presenting `authority`'s server certificate, asking for client certificates of
    /// `clientCA` when given (mutual TLS).
    public func serverConfiguration(_ authority: Authority, clientCA: Authority? = nil) -> TLSServerConfiguration {
        TLSServerConfiguration(
            certificateChainFile: authority.serverCertificate, privateKeyFile: authority.serverKey,
            clientCAFile: clientCA?.certificate)
    }

    /// A client trusting `authority`, presenting `client`'s client certificate when given.
    public func clientConfiguration(trusting authority: Authority, presenting client: Authority? = nil)
        -> TLSClientConfiguration
    {
        TLSClientConfiguration(
            caFile: authority.certificate, certificateChainFile: client?.clientCertificate,
            privateKeyFile: client?.clientKey)
    }

    private static func authority(_ name: String, in directory: TemporaryDirectory) throws -> Authority {
        let ca = "\(name)-ca"
        try directory.write(
            Array(
                """
                [req]
                distinguished_name = dn
                x509_extensions = ca
                prompt = no
                [dn]
                CN = mrpc test CA \(name)
                [ca]
                basicConstraints = critical,CA:TRUE
                keyUsage = critical,keyCertSign,cRLSign
                subjectKeyIdentifier = hash

                """.utf8), to: "\(ca).cnf")
        try openssl(
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"]
                + ["-config", "\(ca).cnf", "-keyout", "\(ca).key", "-out", "\(ca).pem"], in: directory)
        try leaf(
            "\(name)-server", commonName: "localhost", ca: ca, serial: name == "main" ? 1 : 3,
            extensions: "subjectAltName = DNS:localhost, IP:127.0.0.1\nextendedKeyUsage = serverAuth", in: directory)
        try leaf(
            "\(name)-client", commonName: "test-client-\(name)", ca: ca, serial: name == "main" ? 2 : 4,
            extensions: "extendedKeyUsage = clientAuth", in: directory)
        let path = { (file: String) in directory.path + "/" + file }
        return Authority(
            certificate: path("\(ca).pem"), serverCertificate: path("\(name)-server.pem"),
            serverKey: path("\(name)-server.key"), clientCertificate: path("\(name)-client.pem"),
            clientKey: path("\(name)-client.key"))
    }

    private static func leaf(
        _ name: String, commonName: String, ca: String, serial: Int, extensions: String,
        in directory: TemporaryDirectory
    ) throws {
        try directory.write(
            Array("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = \(commonName)\n".utf8), to: "\(name).cnf")
        try directory.write(Array("basicConstraints = CA:FALSE\n\(extensions)\n".utf8), to: "\(name).ext")
        try openssl(
            ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
                + ["-config", "\(name).cnf", "-keyout", "\(name).key", "-out", "\(name).csr"], in: directory)
        try openssl(
            ["x509", "-req", "-in", "\(name).csr", "-CA", "\(ca).pem", "-CAkey", "\(ca).key"]
                + ["-set_serial", String(serial), "-days", "2", "-extfile", "\(name).ext", "-out", "\(name).pem"],
            in: directory)
    }

    /// Runs `openssl` in `directory`.
    private static func openssl(_ arguments: [String], in directory: TemporaryDirectory) throws {
        let outcome = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "cd \"$0\" && exec openssl \"$@\"", directory.path] + arguments
        ).finish(timeoutMs: 30_000)
        guard outcome.exitCode == 0 else {
            throw TestFailure(
                "openssl \(arguments.joined(separator: " ")) failed (is Debian's openssl installed?): \(outcome)")
        }
    }
}
