import Glibc
import Synchronization
import TestSupport
import ThreadSupport
import WebhookDelivery

/// nghttpd (nghttp2's server) over TLS, answering every POST with its own body: an HTTP/2 peer
/// that Python's standard library does not offer.
final class HTTP2Receiver {
    let port: Int
    private let pid: pid_t

    init(port: Int, certificateFile: String, keyFile: String) throws {
        self.port = port
        // Debian installs it in /usr/sbin, which a test's PATH may lack.
        let executable = access("/usr/sbin/nghttpd", X_OK) == 0 ? "/usr/sbin/nghttpd" : "nghttpd"
        pid = try WebhookReceiver.spawn([
            executable, "-a", "127.0.0.1", "--echo-upload", String(port), keyFile, certificateFile,
        ])
        for _ in 0..<200 {
            if Self.accepts(port: port) { return }
            usleep(25_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        throw ReceiverFailure("nghttpd did not start on port \(port)")
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    private static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Completions as the delivery thread reports them, for a test thread to wait on.
final class CompletionRecorder: Sendable {
    private let completions = Mutex<[WebhookCompletion]>([])
    private let arrived = BlockingSemaphore()

    var callback: @Sendable (WebhookCompletion) -> Void {
        { completion in
            self.completions.withLock { $0.append(completion) }
            self.arrived.signal()
        }
    }

    /// Waits for `count` more completions (10 s at most) and returns all so far, in order of arrival.
    func wait(for count: Int, milliseconds: Int64 = 10_000) -> [WebhookCompletion] {
        for _ in 0..<count where !arrived.wait(milliseconds: milliseconds) { break }
        return completions.withLock { $0 }
    }
}
