import LoadGeneration
import RPCCore

extension BenchReport {
    /// The percentiles the HTML report charts: ghz's (p10 … p99) and p99.9.
    static let htmlPercentiles: [(String, Double)] = [
        ("p10", 0.1), ("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99),
        ("p99.9", 0.999),
    ]

    /// The colours of the charts' bars; the report's test looks for them in a screenshot.
    static let histogramColor = "#3b6fd6"
    static let percentileColor = "#14967a"

    /// The report as one HTML page, ghz's `-O html`: the summary, the latency histogram and the
    /// percentiles as bar charts, the status code distribution, and connection errors if any.
    ///
    /// Self-contained, as a file mailed or archived must be: the style sheet is inline, the
    /// charts are inline SVG, the fonts are the reader's own, and there is no script — ghz's
    /// page loads its charts' scripts and styles from CDNs and shows nothing offline. Every figure
    /// is also text (the bars' labels, a table of percentiles, the histogram's buckets under a
    /// `<details>`), so the page reads without images too.
    static func html(_ run: BenchRun) -> String {
        let (report, configuration) = (run.report, run.configuration)
        let latency = report.latency
        let method = HTMLText.escape(configuration.path)
        let date = WallClock.rfc3339(seconds: WallClock.now().seconds)
        var page = [
            "<!DOCTYPE html>",
            "<html lang=\"en\">",
            "<head>",
            "<meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<title>rpc-probe bench \(method)</title>",
            "<style>\(style)</style>",
            "</head>",
            "<body>",
            "<main>",
            "<h1>rpc-probe bench</h1>",
            "<p class=\"subtitle\"><code>\(method)</code> · \(date) · \(HTMLText.escape(load(configuration)))</p>",
            "<nav><a href=\"#summary\">Summary</a> · <a href=\"#histogram\">Histogram</a> · "
                + "<a href=\"#latency\">Latency distribution</a> · <a href=\"#status\">Status distribution</a>"
                + (report.connectionErrors.isEmpty ? "" : " · <a href=\"#errors\">Connection errors</a>") + "</nav>",
        ]
        page += summary(run)
        page += histogramSection(latency)
        page += latencySection(latency)
        page += statusSection(report)
        if !report.connectionErrors.isEmpty {
            page += [
                "<section id=\"errors\">", "<h2>Connection errors</h2>", "<table>",
                "<tr><th>Error</th><th>Count</th></tr>",
            ]
            for (error, count) in connectionErrors(report) {
                page.append("<tr><td>\(HTMLText.escape(error))</td><td class=\"number\">\(count)</td></tr>")
            }
            page += ["</table>", "</section>"]
        }
        page += [
            "<footer>Made by rpc-probe bench. Latencies are in milliseconds, measured from sending a call to its "
                + "reply; the histogram's buckets are log-linear, so percentiles are exact to about 1%.</footer>",
            "</main>",
            "</body>",
            "</html>",
        ]
        return page.joined(separator: "\n")
    }

    /// "2 connection(s) × 8 in flight", with the rate limit and warm-up when there are.
    private static func load(_ configuration: LoadConfiguration) -> String {
        "\(configuration.connections) connection(s) × \(configuration.depth) in flight"
            + (configuration.transport == .grpc ? " over gRPC" : "")
            + (configuration.rate.map { ", limited to \(fixed($0, 1)) calls/s" } ?? "")
            + (configuration.warmupSeconds > 0 ? ", after \(fixed(configuration.warmupSeconds, 2)) s of warm-up" : "")
    }

    private static func summary(_ run: BenchRun) -> [String] {
        let (report, configuration) = (run.report, run.configuration)
        let latency = report.latency
        var rows: [(String, String)] = [
            ("Count", "\(report.calls)"),
            ("Total", "\(fixed(report.durationSeconds, 2)) s"),
            ("Slowest", "\(ms(latency.maxNanoseconds)) ms"),
            ("Fastest", "\(ms(fastest(latency))) ms"),
            ("Average", "\(ms(latency.meanNanoseconds)) ms"),
            ("Requests/sec", fixed(report.callsPerSecond, 1)),
            ("Errors", "\(failedCalls(report))"),
            ("Load", load(configuration)),
            ("Client CPU", "\(fixed(report.clientCPUNanosecondsPerCall / 1000, 2)) µs per call"),
        ]
        if run.showsRequests { rows.append(("Requests", run.requestsSummary)) }
        return ["<section id=\"summary\">", "<h2>Summary</h2>", "<table class=\"summary\">"]
            + rows.map { "<tr><th>\($0.0)</th><td>\(HTMLText.escape($0.1))</td></tr>" }
            + ["</table>", "</section>"]
    }

    private static func histogramSection(_ latency: LatencyHistogram) -> [String] {
        var lines = ["<section id=\"histogram\">", "<h2>Response time histogram</h2>"]
        let buckets = histogram(latency)
        guard !buckets.isEmpty else { return lines + ["<p>No call was measured.</p>", "</section>"] }
        var lower = fastest(latency)
        let bars = buckets.map { bucket in
            defer { lower = bucket.upperMicros * 1000 }
            return SVGBarChart.Bar(
                label: ms(bucket.upperMicros * 1000), value: Double(bucket.count), valueText: "\(bucket.count)",
                tooltip: "\(bucket.count) call(s) from \(ms(lower)) ms up to \(ms(bucket.upperMicros * 1000)) ms")
        }
        let chart = SVGBarChart(
            id: "histogram-chart", description: "Latency histogram: calls by latency", bars: bars,
            color: histogramColor, axisTitle: "latency, ms (each bar: the calls up to that latency)")
        lines += [
            chart.render(), "<details><summary>Buckets</summary>", "<table>",
            "<tr><th>Up to (ms)</th><th>Calls</th></tr>",
        ]
        for bucket in buckets {
            lines.append(
                "<tr><td class=\"number\">\(ms(bucket.upperMicros * 1000))</td><td class=\"number\">\(bucket.count)</td></tr>"
            )
        }
        return lines + ["</table>", "</details>", "</section>"]
    }

    private static func latencySection(_ latency: LatencyHistogram) -> [String] {
        var lines = ["<section id=\"latency\">", "<h2>Latency distribution</h2>"]
        guard latency.count > 0 else { return lines + ["<p>No call was measured.</p>", "</section>"] }
        let figures = htmlPercentiles.map { (label: $0.0, nanoseconds: latency.percentile($0.1)) }
        let bars = figures.map { figure in
            SVGBarChart.Bar(
                label: figure.label, value: Double(figure.nanoseconds) / 1e6, valueText: ms(figure.nanoseconds),
                tooltip: "\(figure.label): \(ms(figure.nanoseconds)) ms")
        }
        let chart = SVGBarChart(
            id: "latency-chart", description: "Latency percentiles, p10 to p99.9", bars: bars, color: percentileColor,
            axisTitle: "percentile (bar: latency in ms at or under which that share of calls completed)")
        lines += [
            chart.render(), "<table class=\"percentiles\">",
            "<tr>" + figures.map { "<th>\($0.label)</th>" }.joined() + "</tr>",
            "<tr>" + figures.map { "<td class=\"number\">\(ms($0.nanoseconds)) ms</td>" }.joined() + "</tr>",
            "</table>", "</section>",
        ]
        return lines
    }

    private static func statusSection(_ report: LoadReport) -> [String] {
        var lines = [
            "<section id=\"status\">", "<h2>Status code distribution</h2>", "<table class=\"statuses\">",
            "<tr><th>Status</th><th>Error code</th><th>Count</th><th>Share</th></tr>",
        ]
        let total = max(report.calls, 1)
        for outcome in outcomes(report) {
            let share = Double(outcome.count) / Double(total) * 100
            let kind = outcome.codeName == "OK" ? "ok" : "failed"
            lines.append(
                "<tr><td>\(HTMLText.escape(outcome.codeName))\(outcome.code.map { " (\($0.rawValue))" } ?? "")</td>"
                    + "<td>\(HTMLText.escape(outcome.errorCode))</td><td class=\"number\">\(outcome.count)</td>"
                    + "<td class=\"share\"><span class=\"share-track\"><span class=\"share-bar \(kind)\" "
                    + "style=\"width: \(fixed(share, 1))%\"></span></span>\(fixed(share, 1)) %</td></tr>")
        }
        return lines + ["</table>", "</section>"]
    }

    /// The page's style: system fonts, a readable measure, charts at their own size.
    private static let style = """
        body { margin: 0; background: #fff; color: #1f2328; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", \
        Roboto, "Helvetica Neue", Arial, sans-serif; }
        main { max-width: 980px; margin: 0 auto; padding: 16px 20px 40px; }
        h1 { font-size: 26px; margin: 8px 0 0; }
        h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 1px solid #d8dee4; padding-bottom: 4px; }
        .subtitle { color: #59636e; margin: 2px 0 8px; }
        code { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; }
        nav a { color: #0b5cad; }
        table { border-collapse: collapse; }
        th, td { text-align: left; padding: 3px 14px 3px 0; vertical-align: top; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; }
        table.summary th { color: #59636e; font-weight: 600; padding-right: 24px; }
        table.percentiles th, table.percentiles td { text-align: right; padding: 2px 8px; }
        .share-track { display: inline-block; width: 160px; height: 12px; margin-right: 8px; \
        vertical-align: middle; background: #eef1f4; }
        .share-bar { display: block; height: 12px; }
        .share-bar.ok { background: #2e9d4f; }
        .share-bar.failed { background: #d1453b; }
        svg.chart { display: block; margin: 8px 0; max-width: 100%; height: auto; }
        svg.chart text { font: 12px system-ui, sans-serif; fill: #1f2328; }
        svg.chart text.tick, svg.chart text.axis-title { fill: #59636e; }
        svg.chart line.grid { stroke: #e6e9ec; }
        svg.chart line.axis { stroke: #8c959f; }
        details { margin: 4px 0 0; }
        footer { margin-top: 36px; color: #59636e; font-size: 13px; }
        """
}
