import LoadGeneration

/// What a bench report is about: what the load measured, how it ran, and whether its requests
/// were meant to differ.
struct BenchRun {
    var report: LoadReport
    var configuration: LoadConfiguration
    /// `-d` had values that change per request (`BenchRequests.variesPerRequest`).
    var variesPerRequest: Bool

    /// The requests made before the load (`LoadConfiguration.bodies`).
    var distinctRequests: Int { configuration.bodies.count }

    /// True when some request was sent more than once: the run sent more calls than it had
    /// requests, and went round them again.
    var requestsRepeated: Bool { report.sentCalls > UInt64(distinctRequests) }

    /// Whether the text and HTML reports show the requests: when there were several, or they
    /// were meant to differ (a single fixed request repeating is what a load test is).
    var showsRequests: Bool { distinctRequests > 1 || variesPerRequest }

    /// "1000 distinct, 1000 sent, none repeated", or "100 distinct, cycled: 2000 sent, so requests
    /// repeat (--variants makes more)".
    var requestsSummary: String {
        let sent = report.sentCalls
        return requestsRepeated
            ? "\(distinctRequests) distinct, cycled: \(sent) sent, so requests repeat (--variants makes more)"
            : "\(distinctRequests) distinct, \(sent) sent, none repeated"
    }
}
