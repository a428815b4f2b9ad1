public import Glibc
import Synchronization
import ThreadSupport

/// A local webhook receiver for the client's tests: Python's `http.server` (HTTP/1.1, keep-alive)
/// in a child process, optionally over TLS under a throwaway CA made with `openssl` for this
/// receiver alone. It checks each request's Standard Webhooks signature with Python's own
/// hmac/hashlib/base64, numbers connections, and logs every request as a line the test reads.
///
/// Paths choose the answer: `/ok` 200, `/slow/<ms>` 200 after sleeping, `/unavailable` 503 with
/// `Retry-After: 7`, `/throttled` 429 with an HTTP-date `Retry-After`, `/gone` 410, `/big` 200
/// with a 1 MiB body. `/switch` answers as `setMode` last said: `ok` (200), `status:N` or
/// `status:N:RETRY_AFTER`, `slow:MS` (200 after sleeping), or `drop` (the connection closed
/// without an answer, as a receiver that is down).
public final class WebhookReceiver: @unchecked Sendable {
    /// One request as the receiver saw it.
    public struct Record: Equatable, Sendable {
        public let path: String
        public let connection: Int
        public let messageID: String
        public let timestamp: String
        public let signatureValid: Bool
        public let contentType: String
        public let body: String
    }

    public let directory: String
    public let port: Int
    public let scheme: String
    private let pid: pid_t

    /// The CA that signed the TLS receiver's certificate (PEM file).
    public var caFile: String { directory + "/ca.pem" }
    /// The TLS receiver's certificate (for `localhost` and 127.0.0.1) and key, for other servers.
    public var certificateFile: String { directory + "/server.pem" }
    public var keyFile: String { directory + "/server.key" }

    /// - Parameter secret: the `whsec_…` secret signatures are checked with.
    public init(secret: String, tls: Bool = false) throws {
        var template = Array("/tmp/webhook-receiver-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ReceiverFailure("mkdtemp failed") }
        directory = String(cString: made)
        scheme = tls ? "https" : "http"
        let script = directory + "/receiver.py"
        try Self.write(Self.script, to: script)
        var arguments = ["python3", script, directory, secret]
        if tls { arguments.append("--tls") }
        pid = try Self.spawn(arguments, standardError: directory + "/stderr")
        var port: Int?
        for _ in 0..<200 {
            if let text = try? Self.read(directory + "/port"), let number = Int(text) {
                port = number
                break
            }
            usleep(50_000)
        }
        guard let port else {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw ReceiverFailure("the receiver did not start: \((try? Self.read(directory + "/stderr")) ?? "")")
        }
        self.port = port
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        _ = try? Self.spawnAndWait(["rm", "-rf", directory])
    }

    public func url(_ path: String) -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }

    /// Every request received so far, in order of arrival.
    public func records() -> [Record] {
        guard let text = try? Self.read(directory + "/requests.tsv") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 7, let connection = Int(fields[1]) else { return nil }
            return Record(
                path: fields[0], connection: connection, messageID: fields[2], timestamp: fields[3],
                signatureValid: fields[4] == "1", contentType: fields[5], body: fields[6])
        }
    }

    /// What `/switch` answers from now on (see the type's comment).
    public func setMode(_ mode: String) throws {
        try Self.write(mode, to: directory + "/mode.tmp")
        guard rename(directory + "/mode.tmp", directory + "/mode") == 0 else {
            throw ReceiverFailure("cannot set the receiver's mode")
        }
    }

    /// Connections accepted so far.
    public func connectionCount() -> Int { Int((try? Self.read(directory + "/connections")) ?? "0") ?? 0 }

    // MARK: Processes and files

    public static func spawn(_ arguments: [String], standardError: String? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, standardError ?? "/dev/null", O_WRONLY | O_CREAT, 0o644)
        // The test runner's threads block signals; the child starts with none blocked and default
        // handlers, so it behaves as from a shell.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, &argv, environ)
        guard result == 0 else { throw ReceiverFailure("cannot start \(arguments[0]): errno \(result)") }
        return pid
    }

    private static func spawnAndWait(_ arguments: [String]) throws -> Int32 {
        let pid = try spawn(arguments)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return status
    }

    private static func write(_ text: String, to path: String) throws {
        guard let file = fopen(path, "w") else { throw ReceiverFailure("cannot write \(path)") }
        defer { fclose(file) }
        fputs(text, file)
    }

    public static func read(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else { throw ReceiverFailure("cannot read \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let script = #"""
        import base64, hashlib, hmac, os, ssl, subprocess, sys, threading, time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        directory, secret = sys.argv[1], sys.argv[2]
        tls = "--tls" in sys.argv[3:]
        key = base64.b64decode(secret[len("whsec_"):])
        lock = threading.Lock()
        connections = 0
        log = open(os.path.join(directory, "requests.tsv"), "a")

        def publish(name, text):
            path = os.path.join(directory, name)
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                global connections
                with lock:
                    connections += 1
                    self.connection_number = connections
                    publish("connections", str(connections))
                super().setup()

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                message_id = self.headers.get("webhook-id", "")
                timestamp = self.headers.get("webhook-timestamp", "")
                signed = f"{message_id}.{timestamp}.".encode() + body
                expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
                given = self.headers.get("webhook-signature", "").split(" ")
                valid = any(hmac.compare_digest(expected, s) for s in given)
                fields = [self.path, str(self.connection_number), message_id, timestamp, "1" if valid else "0",
                          self.headers.get("content-type", ""), body.decode().replace("\t", " ").replace("\n", " ")]
                with lock:
                    log.write("\t".join(fields) + "\n")
                    log.flush()
                status, headers, payload = 200, [], b"ok"
                if self.path == "/switch":
                    try:
                        mode = open(os.path.join(directory, "mode")).read().strip()
                    except OSError:
                        mode = "ok"
                    if mode == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    if mode.startswith("slow:"):
                        time.sleep(int(mode.split(":")[1]) / 1000)
                    elif mode.startswith("status:"):
                        parts = mode.split(":")
                        status = int(parts[1])
                        if len(parts) > 2:
                            headers = [("Retry-After", parts[2])]
                elif self.path.startswith("/slow/"):
                    time.sleep(int(self.path.split("/")[2]) / 1000)
                elif self.path == "/unavailable":
                    status, headers = 503, [("Retry-After", "7")]
                elif self.path == "/throttled":
                    status, headers = 429, [("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")]
                elif self.path == "/gone":
                    status = 410
                elif self.path == "/big":
                    payload = b"x" * (1 << 20)
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    pass

        def openssl(*args):
            subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if tls:
            openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=webhook test CA")
            openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
            with open(os.path.join(directory, "san.ext"), "w") as f:
                f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
            openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", "server.pem", "-days", "2", "-extfile", "san.ext")
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server.key"))
            server.socket = context.wrap_socket(server.socket, server_side=True)
        publish("port", str(server.server_address[1]))
        server.serve_forever()
        """#
}

public struct ReceiverFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
