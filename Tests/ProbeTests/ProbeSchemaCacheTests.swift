internal import Glibc
import ModerationMessages
import ProtoBridge
import RPCMessages
import TestSupport
import Testing

/// rpc-probe's descriptor-set cache: kept after a reflection call, used while the server's
/// HELLO_ACK names the same digest, never for another build, and never an error when a file is
/// corrupt or the directory unusable.
@Suite("rpc-probe schema cache", .serialized)
struct ProbeSchemaCacheTests {
    static let fetches =
        "mrpc_internal_calls_total{method=\"\(ReflectionMethods.getFileDescriptorSet.path)\",code=\"OK\",wire=\"mrpc\"}"

    /// The descriptor set the server reflects.
    static let served = RPCSchema.fileDescriptorSet + ModerationSchema.fileDescriptorSet

    /// A server with metrics, a runner whose cache is a fresh directory, and that directory.
    struct Setup {
        let server: ModerationServerProcess
        let probe: ProbeRunner
        let home: TemporaryDirectory
        let metrics: UInt16
        /// The server's `schema_digest`, from a handshake.
        let digest: String

        init() throws {
            server = try ModerationServerProcess(arguments: ["--metrics-listen", "127.0.0.1:0"])
            home = TemporaryDirectory(prefix: "probe-cache-test")
            var probe = ProbeRunner(server)
            probe.environment["XDG_CACHE_HOME"] = home.path
            self.probe = probe
            metrics = try server.metricsPort()
            let raw = try RawConnection(port: server.port)
            digest = try raw.handshake(apiKey: "\(ModerationServerProcess.appID):\(ModerationServerProcess.apiKey)")
                .schemaDigest
        }

        var directory: String { home.path + "/rpc-probe" }
        var fileName: String { "moderation-server-0.1.0-\(digest.dropFirst("sha256:".count)).protoset" }

        /// Descriptor sets fetched by reflection so far.
        func fetchCount() throws -> Double { try MetricsScrape(port: metrics)[ProbeSchemaCacheTests.fetches] }

        /// `list` (verbose), checked to have listed the server's services.
        func list(_ extra: [String] = []) throws -> String {
            let outcome = try probe.run(["-v"] + extra + ["list"])
            #expect(outcome.exitCode == 0, "\(outcome)")
            #expect(outcome.standardOutput.contains("moderation.v1.Moderation\n"), "\(outcome.standardOutput)")
            return outcome.standardError
        }

        func tearDown() {
            _ = try? server.stop()
            home.remove()
        }
    }

    @Test("HELLO_ACK names the digest of exactly the set reflection returns")
    func digestAnnounced() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        #expect(setup.digest.hasPrefix("sha256:") && setup.digest.utf8.count == 71, "\(setup.digest)")
        _ = try setup.list()
        let kept = try TemporaryDirectory.bytes(ofFile: setup.directory + "/" + setup.fileName)
        #expect(kept == Self.served, "the file holds the set as reflection returned it")
    }

    @Test("the second run takes the set from the cache: no reflection call; --no-cache makes one and keeps nothing")
    func secondRunUsesCache() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        let first = try setup.list()
        #expect(first.contains("fetched by reflection, kept in \(setup.directory)/\(setup.fileName)"), "\(first)")
        #expect(try setup.fetchCount() == 1)
        let second = try setup.list()
        #expect(second.contains("from the cache"), "\(second)")
        #expect(try setup.fetchCount() == 1, "no descriptor set was fetched the second time")
        let uncached = try setup.list(["--no-cache"])
        #expect(!uncached.contains("schema:"), "\(uncached)")
        #expect(try setup.fetchCount() == 2)
        #expect(TemporaryDirectory.names(in: setup.directory) == [setup.fileName])
    }

    @Test("a set kept for another build of the same version is not used, and is removed")
    func otherBuildMisses() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        // A valid set of another schema (no moderation.v1), under another digest.
        let other = "moderation-server-0.1.0-\(String(repeating: "a", count: 64)).protoset"
        mkdir(setup.directory, 0o700)
        try setup.home.write(RPCSchema.fileDescriptorSet, to: "rpc-probe/" + other)
        let errors = try setup.list()
        #expect(errors.contains("fetched by reflection"), "\(errors)")
        #expect(try setup.fetchCount() == 1)
        #expect(TemporaryDirectory.names(in: setup.directory) == [setup.fileName], "the other build's set is gone")
    }

    @Test("a corrupt or cut-short file is ignored and written again; an unusable directory is no error")
    func corruptIgnored() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        mkdir(setup.directory, 0o700)
        let path = setup.directory + "/" + setup.fileName
        for (index, bad) in [Array("not a descriptor set".utf8), Array(Self.served.prefix(1000))].enumerated() {
            try setup.home.write(bad, to: "rpc-probe/" + setup.fileName)
            let errors = try setup.list()
            #expect(errors.contains("fetched by reflection, kept in"), "\(errors)")
            #expect(try setup.fetchCount() == Double(index + 1))
            #expect(try TemporaryDirectory.bytes(ofFile: path) == Self.served, "replaced by the good set")
        }
        // XDG_CACHE_HOME a regular file: nothing can be kept, and nothing fails.
        let file = try setup.home.write([1], to: "not-a-directory")
        var probe = setup.probe
        probe.environment["XDG_CACHE_HOME"] = file
        let outcome = try probe.run("-v", "list")
        #expect(outcome.exitCode == 0, "\(outcome)")
        #expect(outcome.standardError.contains("not cached (cannot write \(file)/rpc-probe)"), "\(outcome)")
    }
}
