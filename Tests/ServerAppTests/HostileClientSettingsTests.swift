internal import Glibc
import RPCCore
import TestSupport
import Testing

@testable import ServerApp

/// The settings against hostile clients (the memory budget, the per-app connection cap, the frame
/// timeout) and what /metrics says about the transport and the budget.
@Suite("Settings and metrics against hostile clients: budget, per-app cap, frame timeout")
struct HostileClientSettingsTests {
    private func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServerSettings {
        guard case .run(let settings) = try ServerSettingsParser.parse(arguments: arguments, environment: environment)
        else {
            throw ConfigurationError("not a run command")
        }
        return settings
    }

    private func error(_ arguments: [String]) -> String? {
        do {
            _ = try ServerSettingsParser.parse(arguments: arguments, environment: [:])
            return nil
        } catch {
            return error.message
        }
    }

    @Test func defaults() throws {
        let defaults = try settings([])
        #expect(defaults.memoryBudget == .automatic)
        #expect(defaults.maxConnectionsPerApp == 50_000)
        #expect(defaults.frameTimeoutMs == 30_000)
    }

    @Test(
        "--memory-budget reads sizes, auto and off, from the flag, the variable and the file",
        arguments: [
            ("512MiB", MemoryBudgetSetting.bytes(512 << 20)), ("2GiB", .bytes(2 << 30)),
            ("1073741824", .bytes(1 << 30)),
            ("off", .off), ("OFF", .off), ("auto", .automatic),
        ])
    func memoryBudget(_ text: String, _ expected: MemoryBudgetSetting) throws {
        #expect(try settings(["--memory-budget", text]).memoryBudget == expected)
        #expect(try settings([], ["MODERATION_MEMORY_BUDGET": text]).memoryBudget == expected)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/moderation.conf"
        let handle = try #require(fopen(file, "w"))
        fputs("memory-budget = \(text)\n", handle)
        fclose(handle)
        #expect(try settings(["--config", file]).memoryBudget == expected)
    }

    @Test func otherSettings() throws {
        #expect(try settings(["--max-connections-per-app", "50"]).maxConnectionsPerApp == 50)
        #expect(try settings([], ["MODERATION_MAX_CONNECTIONS_PER_APP": "7"]).maxConnectionsPerApp == 7)
        #expect(try settings(["--frame-timeout", "5s"]).frameTimeoutMs == 5_000)
        #expect(try settings(["--frame-timeout", "250ms"]).frameTimeoutMs == 250)
        #expect(try settings([], ["MODERATION_FRAME_TIMEOUT": "2"]).frameTimeoutMs == 2_000)
    }

    @Test(
        "invalid values are refused naming the setting",
        arguments: [
            (["--memory-budget", "lots"], "--memory-budget: 'lots' is not a size"),
            (["--memory-budget", "512KiB"], "--memory-budget: '512KiB' is not a size from 1048576"),
            (["--max-connections-per-app", "0"], "--max-connections-per-app"),
            (["--frame-timeout", "10ms"], "--frame-timeout: '10ms' is not from 100ms to 1h"),
            (["--frame-timeout", "soon"], "--frame-timeout"),
        ])
    func invalid(_ arguments: [String], _ expected: String) {
        let message = error(arguments)
        #expect(message?.hasPrefix(expected) == true, "\(message ?? "accepted")")
    }

    @Test("the default budget is half the memory available, at least 64 MiB; off has no limit")
    func budgetLimits() {
        #expect(MemoryBudgetSetting.automatic.limit(available: 8 << 30) == 4 << 30)
        #expect(MemoryBudgetSetting.automatic.limit(available: 100 << 20) == 64 << 20)
        #expect(MemoryBudgetSetting.off.limit(available: 8 << 30) == nil)
        #expect(MemoryBudgetSetting.bytes(1 << 30).limit(available: 8 << 30) == 1 << 30)
        let available = AvailableMemory.bytes()
        #expect(available > 64 << 20 && available < Int.max, "physical memory, or the cgroup's limit: \(available)")
    }

    @Test("/metrics: accept errors, refusals, cuts and wrong keys by reason; the budget's limit and use by kind")
    func metrics() {
        let budget = MemoryBudget(limit: 64 << 20)
        budget.reserve(3_000, for: .outbound)
        budget.reserve(500, for: .inbound)
        let metrics = ServerMetrics(methods: [], accessLog: nil, gauges: { ServerGauges.budgetSamples(budget) })
        metrics.transportEvent(.acceptFailed(.processDescriptors))
        metrics.transportEvent(.acceptFailed(.processDescriptors))
        metrics.transportEvent(.connectionRefused(.appFull))
        metrics.transportEvent(.connectionRefused(.outOfDescriptors))
        metrics.transportEvent(.connectionCut(.memoryBudget))
        metrics.transportEvent(.authenticationFailed(.mrpc, logged: true))
        for _ in 0..<3 { metrics.transportEvent(.authenticationFailed(.mrpc, logged: false)) }
        let lines = Set(metrics.render().split(separator: "\n").map(String.init))
        for expected in [
            "mrpc_accept_errors_total{reason=\"emfile\"} 2", "mrpc_accept_errors_total{reason=\"enfile\"} 0",
            "mrpc_connections_refused_total{reason=\"max_connections_per_app\"} 1",
            "mrpc_connections_refused_total{reason=\"out_of_descriptors\"} 1",
            "mrpc_connections_refused_total{reason=\"max_connections\"} 0",
            "mrpc_connections_cut_total{reason=\"memory_budget\"} 1",
            "mrpc_connections_cut_total{reason=\"frame_timeout\"} 0",
            "mrpc_auth_failures_total 4", "mrpc_auth_failures_throttled_total 3",
            "mrpc_memory_budget_bytes 67108864",
            "mrpc_memory_budget_used_bytes{kind=\"outbound\"} 3000",
            "mrpc_memory_budget_used_bytes{kind=\"inbound\"} 500",
            "mrpc_memory_budget_used_bytes{kind=\"compression\"} 0",
            "mrpc_memory_budget_used_bytes{kind=\"subscriptions\"} 0",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)")
        }
        let unlimited = ServerMetrics(
            methods: [], accessLog: nil, gauges: { ServerGauges.budgetSamples(.unlimited()) })
        #expect(!unlimited.render().contains("mrpc_memory_budget_bytes "), "no limit, no limit gauge")
    }
}
