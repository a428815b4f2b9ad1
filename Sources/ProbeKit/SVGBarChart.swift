/// A vertical bar chart as inline SVG, for the HTML bench report: drawn by the browser with no
/// script, font or style sheet from elsewhere, so the report is one file that opens anywhere.
///
/// Coordinates are whole pixels and edges crisp, so each bar is a block of exactly its colour
/// (which is how the report's test finds the bars in a screenshot); lines sit on pixel centres
/// (`y.5`), so a one-pixel line fills one row — the axis just under the bars, not their last row. A bar whose value is not
/// zero is at least `minimumBarHeight` tall: one call among thousands still shows.
struct SVGBarChart {
    struct Bar {
        /// Under the bar (the bucket's bound, "p99").
        var label: String
        var value: Double
        /// Over the bar ("912", "0.521 ms").
        var valueText: String
        /// Shown on hover (an SVG `<title>`, which needs no script).
        var tooltip: String
    }

    /// The `id` of the `<svg>` element.
    var id: String
    /// What the chart shows, for screen readers (`aria-label`).
    var description: String
    var bars: [Bar]
    /// The bars' fill, `#rrggbb`.
    var color: String
    /// Under the labels, naming what they are ("latency, ms (upper bound of each bucket)").
    var axisTitle: String

    static let width = 920
    static let height = 320
    static let minimumBarHeight = 2
    private static let left = 64
    private static let right = 16
    private static let top = 28
    private static let bottom = 64

    /// The chart as an `<svg>` element.
    func render() -> String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let baseline = Self.top + plotHeight
        let scale = Self.niceCeiling(bars.map(\.value).max() ?? 0)
        var svg = [
            "<svg id=\"\(id)\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.width)\" "
                + "height=\"\(Self.height)\" viewBox=\"0 0 \(Self.width) \(Self.height)\" role=\"img\" "
                + "aria-label=\"\(HTMLText.escape(description))\" shape-rendering=\"crispEdges\">"
        ]
        // Gridlines and the value axis: five steps from zero to a round number over the largest bar.
        for step in 0...5 {
            let y = baseline - plotHeight * step / 5
            let value = scale * Double(step) / 5
            svg.append(
                "<line class=\"grid\" x1=\"\(Self.left)\" y1=\"\(y).5\" x2=\"\(Self.width - Self.right)\" y2=\"\(y).5\"/>"
                    + "<text class=\"tick\" x=\"\(Self.left - 8)\" y=\"\(y + 4)\" text-anchor=\"end\">"
                    + "\(Self.tickText(value))</text>")
        }
        let band = bars.isEmpty ? plotWidth : plotWidth / bars.count
        let barWidth = max(1, band * 7 / 10)
        for (index, bar) in bars.enumerated() {
            let x = Self.left + band * index + (band - barWidth) / 2
            var height = scale > 0 ? Int((bar.value / scale * Double(plotHeight)).rounded()) : 0
            if bar.value > 0 { height = max(height, Self.minimumBarHeight) }
            let center = x + barWidth / 2
            svg.append(
                "<g class=\"bar\"><title>\(HTMLText.escape(bar.tooltip))</title>"
                    + "<rect x=\"\(x)\" y=\"\(baseline - height)\" width=\"\(barWidth)\" height=\"\(height)\" "
                    + "fill=\"\(color)\"/>"
                    + "<text class=\"value\" x=\"\(center)\" y=\"\(baseline - height - 6)\" text-anchor=\"middle\">"
                    + "\(HTMLText.escape(bar.valueText))</text>"
                    + "<text class=\"label\" x=\"\(center)\" y=\"\(baseline + 18)\" text-anchor=\"middle\">"
                    + "\(HTMLText.escape(bar.label))</text></g>")
        }
        svg.append(
            "<line class=\"axis\" x1=\"\(Self.left)\" y1=\"\(baseline).5\" x2=\"\(Self.width - Self.right)\" "
                + "y2=\"\(baseline).5\"/>"
                + "<text class=\"axis-title\" x=\"\(Self.left + plotWidth / 2)\" y=\"\(Self.height - 12)\" "
                + "text-anchor=\"middle\">\(HTMLText.escape(axisTitle))</text>")
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }

    /// The smallest of 1, 2, 2.5, 5 × a power of ten at or over `value` (0 stays 0): the top of
    /// the value axis, so that its five gridlines fall on round numbers.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 0 }
        var power = 1.0
        while power * 10 <= value { power *= 10 }
        while power > value { power /= 10 }
        for factor in [1.0, 2, 2.5, 5, 10] where factor * power >= value { return factor * power }
        return 10 * power
    }

    /// A gridline's value: whole numbers as such, fractions with up to three decimals.
    private static func tickText(_ value: Double) -> String {
        if value == value.rounded() { return String(Int(value)) }
        var text = BenchReport.fixed(value, 3)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
