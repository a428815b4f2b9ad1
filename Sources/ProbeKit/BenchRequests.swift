import LoadGeneration
import ProtoSchema

/// The requests bench sends: made from `-d` and encoded before the load, then sent in turn (call
/// `k` sends request `k` mod their number, `LoadConfiguration.bodies`).
///
/// Encoding each call's request during the load would about double the client's work per call
/// (reading the JSON through the schema and writing the protobuf take about 3 µs a request in a
/// release build, a whole call about 3.4 µs of client CPU); made beforehand, a call costs a copy.
/// So a template whose values change per request (`{{.RequestNumber}}`, `{{.UUID}}`, timestamps)
/// is rendered for as many requests as the run will send, as far as that is known, and the
/// report says when the run sent more and so sent some of them again.
struct BenchRequests {
    /// The encoded requests, in request-number order.
    var bodies: [[UInt8]]
    /// True when `-d` has actions whose value changes per request: its requests are meant to
    /// differ, and a run that sends one twice says so.
    var variesPerRequest: Bool

    /// How many requests a per-request template makes by default when neither `--variants` nor
    /// `--total` says: enough for most timed runs, made by a release build in about 0.3 s, in
    /// about 20 MB (docs/RPC-PROBE.md, "Templates", has the measurements).
    static let defaultCount = 100_000
    /// The most requests made without `--variants` saying so.
    static let largestDefault = 1_000_000

    /// How many requests to make.
    ///
    /// `--variants` when given; for a per-request template, as many as the run will send: `--total`
    /// (warm-up calls come first, so a warm-up makes the run send some again), or with `--rps` the
    /// rate times the run's length, up to `largestDefault`; else `defaultCount`. A template
    /// without actions makes one request, whatever `--variants` says: copies would be the same
    /// bytes.
    static func count(variants: Int?, template: RequestTemplate, configuration: LoadConfiguration) -> Int {
        guard template.hasActions else { return 1 }
        if let variants { return variants }
        guard template.variesPerRequest else { return 1 }
        if let total = configuration.total { return min(total, largestDefault) }
        if let rate = configuration.rate {
            let calls = rate * (configuration.warmupSeconds + configuration.durationSeconds)
            return Int(min(calls.rounded(.up), Double(largestDefault)))
        }
        return defaultCount
    }

    /// Renders and encodes `count` requests of `method` from `template`.
    /// - Throws: `.failure` for a request that is not a valid `method` request, naming its
    ///   number when there are several.
    static func make(_ template: RequestTemplate, count: Int, method: MethodDescriptor) throws(ProbeError)
        -> BenchRequests
    {
        var random = SystemRandomNumberGenerator()
        var bodies: [[UInt8]] = []
        bodies.reserveCapacity(count)
        for number in 0..<count {
            let json = template.render(number: number, method: method, random: &random)
            do throws(ProtoSchemaError) {
                bodies.append(try DynamicMessage(jsonString: json, as: method.inputType).serializedBytes())
            } catch {
                throw .failure(
                    "invalid request for \(method.fullName)\(count > 1 ? " (variant \(number))" : ""): \(error.message)"
                )
            }
        }
        return BenchRequests(bodies: bodies, variesPerRequest: template.variesPerRequest)
    }
}
