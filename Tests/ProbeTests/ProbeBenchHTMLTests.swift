import TestSupport
import Testing

/// `bench -O html`: a page that needs nothing from elsewhere, whose charts a real browser draws —
/// headless Chromium's DOM holds them, and its screenshot shows every bar of both charts at the
/// height the page gives it. Skipped (saying so) only where chromium is not installed;
/// `tools/setup` installs it.
@Suite("rpc-probe bench: the HTML report")
struct ProbeBenchHTMLTests {
    /// The `<svg id="…">` element of `page`, as text.
    static func svg(_ id: String, in page: String) throws -> Substring {
        let start = try #require(page.firstRange(of: "<svg id=\"\(id)\""), "no svg#\(id)")
        let end = try #require(page[start.lowerBound...].firstRange(of: "</svg>"), "svg#\(id) not closed")
        return page[start.lowerBound..<end.upperBound]
    }

    /// The values of attribute `name` in `text`, in order ("height" of every rect).
    static func attributes(_ name: String, in text: Substring, after element: String) -> [String] {
        text.split(separator: element).dropFirst().compactMap { tail in
            guard let start = tail.firstRange(of: " \(name)=\"") else { return nil }
            return String(tail[start.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// The bars of exactly `color` in `image`, left to right: at least 8 columns wide (so stray
    /// pixels of text are not bars), each with the height of its middle column in that colour.
    static func bars(of color: UInt32, in image: PNGImage) -> [Int] {
        var columns = [Int](repeating: 0, count: image.width)
        for y in 0..<image.height {
            for x in 0..<image.width where image.rgb(x: x, y: y) == color { columns[x] += 1 }
        }
        var heights: [Int] = []
        var x = 0
        while x < image.width {
            guard columns[x] > 0 else {
                x += 1
                continue
            }
            let start = x
            while x < image.width && columns[x] > 0 { x += 1 }
            if x - start >= 8 { heights.append(columns[(start + x) / 2]) }
        }
        return heights
    }

    @Test(
        "-O html -o FILE: self-contained; Chromium parses both charts and draws every bar at its height",
        .enabled(if: HeadlessChromium.isAvailable, "chromium is not installed: tools/setup installs Debian's chromium"))
    func rendersInChromium() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let path = server.dataDirectory.path + "/report.html"
        let run = try ProbeRunner(server).run(
            "bench", moderation("GetUser"), "-d", #"{"uid":"u{{.RequestNumber}}"}"#, "-n", "400", "-c", "4", "-O",
            "html", "-o", path)
        #expect(run.exitCode == 1 && run.standardOutput.isEmpty, "every GetUser is NOT_FOUND: \(run)")
        let page = try server.dataDirectory.read("report.html")
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.hasSuffix("</html>\n"))
        for part in ["<script", "<link", "src=", "url(", "@import"] {
            #expect(!page.contains(part), "the page loads nothing: \(part)")
        }
        #expect(
            page.split(separator: "http").dropFirst().allSatisfy { $0.hasPrefix("://www.w3.org/2000/svg") },
            "no address but SVG's namespace")
        for text in [
            "<th>Count</th><td>400</td>", "<th>Errors</th><td>400</td>",
            "<th>Load</th><td>1 connection(s) × 4 in flight",
            "<th>Requests</th><td>400 distinct, 400 sent, none repeated</td>",
            "<td>NOT_FOUND (5)</td><td>ERR_UID_NOT_FOUND</td>",
            "<th>p10</th>", "<th>p99.9</th>",
        ] {
            #expect(page.contains(text), "\(text)")
        }
        let histogram = try Self.svg("histogram-chart", in: page)
        let latency = try Self.svg("latency-chart", in: page)
        let counts = histogram.split(separator: "<text class=\"value\"").dropFirst().compactMap { tail in
            Int(tail.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" })
        }
        let histogramHeights = Self.attributes("height", in: histogram, after: "<rect ").compactMap { Int($0) }
        let latencyHeights = Self.attributes("height", in: latency, after: "<rect ").compactMap { Int($0) }
        #expect(latencyHeights.count == 8 && latencyHeights == latencyHeights.sorted(), "\(latencyHeights)")
        #expect(!histogramHeights.isEmpty && histogramHeights.count <= 11, "\(histogramHeights)")
        #expect(counts.count == histogramHeights.count && counts.reduce(0, +) == 400, "\(counts)")
        for (count, height) in zip(counts, histogramHeights) {
            #expect(
                (count > 0) == (height >= 2), "a bucket with calls shows, one without does not: \(count), \(height)")
            for (other, otherHeight) in zip(counts, histogramHeights) where count > other {
                #expect(height >= otherHeight, "more calls, a bar at least as tall")
            }
        }

        // What Chromium parsed: both charts, their bars, and no script.
        let dom = try HeadlessChromium.dumpDOM(path)
        #expect(
            Self.attributes("height", in: try Self.svg("histogram-chart", in: dom), after: "<rect ").count
                == histogramHeights.count)
        #expect(Self.attributes("height", in: try Self.svg("latency-chart", in: dom), after: "<rect ").count == 8)
        #expect(!dom.contains("<script"))

        // What Chromium drew: every bar of each chart, in its colour, at the height the page gives it
        // (bars of no calls are not drawn).
        let image = try HeadlessChromium.screenshot(path, width: 1200, height: 2000)
        func color(_ chart: Substring) throws -> UInt32 {
            let fill = try #require(Self.attributes("fill", in: chart, after: "<rect ").first)
            return try #require(UInt32(fill.dropFirst(), radix: 16), "\(fill)")
        }
        #expect(Self.bars(of: try color(histogram), in: image) == histogramHeights.filter { $0 > 0 })
        #expect(Self.bars(of: try color(latency), in: image) == latencyHeights)
        #expect(latencyHeights.last ?? 0 >= 100, "the slowest percentile's bar is at least 100 pixels tall")
    }

    @Test("-O html on standard output: the summary and statuses; one fixed request shows no requests line")
    func standardOutput() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let html = try ProbeRunner(server).run(
            "bench", "mrpc.diagnostics.v1.Diagnostics/Echo", "-n", "50", "-O", "html")
        #expect(html.isCleanSuccess, "\(html)")
        let page = html.standardOutput
        #expect(page.contains("<th>Count</th><td>50</td>") && page.contains("<td>OK (0)</td>"), "\(page)")
        #expect(!page.contains("<th>Requests</th>"), "one fixed request: no requests line")
        #expect(page.contains("<title>rpc-probe bench /mrpc.diagnostics.v1.Diagnostics/Echo</title>"))
    }
}
