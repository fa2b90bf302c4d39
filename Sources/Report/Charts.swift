// The report's charts, drawn as inline SVG through `SVG`: line charts (training curves)
// and grouped bar charts (histograms). Axis titles carry class "axis-label".
import Foundation

/// Colours of series and groups, in order (colour-blind-safe Tableau 10).
public enum Palette {
    static let colors = ["#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
                                "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"]
    static func color(_ i: Int) -> String { colors[((i % colors.count) + colors.count) % colors.count] }
}

/// Plot-area geometry shared by the charts.
struct Frame {
    let width: Double, height: Double
    let left: Double, right: Double, top: Double, bottom: Double
    var plotWidth: Double { width - left - right }
    var plotHeight: Double { height - top - bottom }
}

public struct LineChart: Sendable {
    public struct Series: Sendable {
        public var name: String
        public var points: [(x: Double, y: Double)]
        var dashed: Bool
        public init(name: String, points: [(x: Double, y: Double)], dashed: Bool = false) {
            self.name = name
            self.points = points
            self.dashed = dashed
        }
    }

    /// A vertical line at `x` with a label, and optionally a dot at (x, y).
    public struct Marker: Sendable {
        public var x: Double
        public var y: Double?
        public var label: String
        public init(x: Double, y: Double?, label: String) {
            self.x = x
            self.y = y
            self.label = label
        }
    }

    public var series: [Series]
    public var xLabel: String
    public var yLabel: String
    public var marker: Marker?
    public var width: Double = 580
    public var height: Double = 260

    public init(series: [Series], xLabel: String, yLabel: String, marker: Marker? = nil) {
        self.series = series
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.marker = marker
    }

    public func render(label: String) -> String {
        let all = series.flatMap(\.points)
        let xs = NiceScale.ticks(lo: all.map(\.x).min() ?? 0, hi: all.map(\.x).max() ?? 1, count: 6)
        let ys = NiceScale.ticks(lo: all.map(\.y).min() ?? 0, hi: all.map(\.y).max() ?? 1, count: 5)
        let yLabels = NiceScale.labels(ys)
        let f = Frame(width: width, height: height, left: leftMargin(yLabels), right: 14, top: 22, bottom: 44)
        var svg = SVG(width: width, height: height)
        let x0 = xs.first ?? 0, x1 = xs.last ?? 1, y0 = ys.first ?? 0, y1 = ys.last ?? 1
        func px(_ x: Double) -> Double { f.left + (x - x0) / max(x1 - x0, .leastNonzeroMagnitude) * f.plotWidth }
        func py(_ y: Double) -> Double { f.top + f.plotHeight - (y - y0) / max(y1 - y0, .leastNonzeroMagnitude) * f.plotHeight }

        drawAxes(&svg, f, xTicks: zip(xs, NiceScale.labels(xs)).map { (px($0), $1) }, yTicks: zip(ys, yLabels).map { (py($0), $1) },
                 xLabel: xLabel, yLabel: yLabel)
        for (i, s) in series.enumerated() {
            var extra = [("stroke", Palette.color(i)), ("stroke-width", "1.6"), ("class", "series")]
            if s.dashed { extra.append(("stroke-dasharray", "5 3")) }
            svg.polyline(s.points.map { (px($0.x), py($0.y)) }, extra)
            if s.points.count <= 30 {  // few evaluations: dots show where the values are
                svg.beginGroup([("fill", Palette.color(i))])
                for p in s.points {
                    svg.element("circle", [("cx", SVG.num(px(p.x))), ("cy", SVG.num(py(p.y))), ("r", "2.5")])
                }
                svg.endGroup()
            }
        }
        if let m = marker {
            let x = px(m.x)
            svg.beginGroup([("class", "best-marker")])
            svg.line(x1: x, y1: f.top, x2: x, y2: f.top + f.plotHeight,
                     [("stroke", "#333"), ("stroke-dasharray", "3 3"), ("stroke-width", "1")])
            if let y = m.y {
                svg.element("circle", [("cx", SVG.num(x)), ("cy", SVG.num(py(y))), ("r", "4"),
                                       ("fill", "none"), ("stroke", "#333"), ("stroke-width", "1.5")])
            }
            let anchorEnd = x > f.left + f.plotWidth * 0.6
            svg.text(m.label, x: anchorEnd ? x - 4 : x + 4, y: f.top - 8,
                     [("font-size", "11"), ("text-anchor", anchorEnd ? "end" : "start")])
            svg.endGroup()
        }
        return svg.render(label: label, className: "chart")
    }
}

/// Bars of several groups (generated, reference) side by side for each category.
public struct BarChart: Sendable {
    public struct Group: Sendable {
        public var name: String
        public var values: [Double]
        public init(name: String, values: [Double]) {
            self.name = name
            self.values = values
        }
    }

    public var categories: [String]
    /// Tooltip per category (e.g. the full GM name), optional.
    public var tooltips: [String]?
    public var groups: [Group]
    public var xLabel: String
    public var yLabel: String
    /// Values are fractions: the y axis reads as percentages.
    public var percent: Bool
    public var width: Double = 580
    public var height: Double = 230

    public init(categories: [String], tooltips: [String]? = nil, groups: [Group], xLabel: String, yLabel: String,
                percent: Bool = true) {
        self.categories = categories
        self.tooltips = tooltips
        self.groups = groups
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.percent = percent
    }

    public func render(label: String) -> String {
        let top = groups.flatMap(\.values).filter(\.isFinite).max() ?? 0
        let ys = NiceScale.ticks(lo: 0, hi: top > 0 ? top : 1, count: 4)
        let yLabels = percent ? NiceScale.labels(ys.map { $0 * 100 }).map { $0 + "%" } : NiceScale.labels(ys)
        let f = Frame(width: width, height: height, left: leftMargin(yLabels), right: 14, top: 14, bottom: 48)
        var svg = SVG(width: width, height: height)
        let y1 = ys.last ?? 1
        func py(_ y: Double) -> Double { f.top + f.plotHeight - y / max(y1, .leastNonzeroMagnitude) * f.plotHeight }
        let n = max(1, categories.count)
        let slot = f.plotWidth / Double(n)
        // Show every k-th category label so they do not overlap.
        let longest = Double(categories.map(\.count).max() ?? 1)
        let every = max(1, Int((longest * 6.5 + 6) / slot) + 1)
        let xTicks = categories.enumerated().compactMap { i, c -> (Double, String)? in
            i % every == 0 ? (f.left + (Double(i) + 0.5) * slot, c) : nil
        }
        drawAxes(&svg, f, xTicks: xTicks,
                 yTicks: zip(ys, yLabels).map { (py($0), $1) },
                 xLabel: xLabel, yLabel: yLabel, xTickMarks: false)
        let gap = slot * 0.15
        let barWidth = (slot - 2 * gap) / Double(max(1, groups.count))
        for (g, group) in groups.enumerated() {
            svg.beginGroup([("fill", Palette.color(g)), ("class", "bars")])
            for (i, v) in group.values.enumerated() where i < categories.count && v > 0 && v.isFinite {
                let x = f.left + Double(i) * slot + gap + Double(g) * barWidth
                let y = py(v)
                let tip = (tooltips?[i] ?? categories[i]) + ", \(group.name): "
                    + (percent ? String(format: "%.1f%%", v * 100) : NiceScale.label(v))
                svg.element("rect", [("x", SVG.num(x)), ("y", SVG.num(y)), ("width", SVG.num(max(0.5, barWidth))),
                                     ("height", SVG.num(f.top + f.plotHeight - y))], title: tip)
            }
            svg.endGroup()
        }
        return svg.render(label: label, className: "chart")
    }
}

/// The plot's left edge: 58 px, wider when a y tick label is longer than the 5 characters
/// (10 px text, about 5.6 px a character) that fit between the axis title and the axis.
func leftMargin(_ yLabels: [String]) -> Double {
    max(58, 28 + 5.6 * Double(yLabels.map(\.count).max() ?? 0))
}

/// Axes, grid lines, tick labels and axis titles.
func drawAxes(_ svg: inout SVG, _ f: Frame, xTicks: [(Double, String)], yTicks: [(Double, String)],
              xLabel: String, yLabel: String, xTickMarks: Bool = true) {
    let bottom = f.top + f.plotHeight
    svg.beginGroup([("class", "grid"), ("stroke", "#e3e3e3"), ("stroke-width", "1")])
    for (y, _) in yTicks { svg.line(x1: f.left, y1: y, x2: f.left + f.plotWidth, y2: y) }
    if xTickMarks { for (x, _) in xTicks { svg.line(x1: x, y1: f.top, x2: x, y2: bottom) } }
    svg.endGroup()
    svg.beginGroup([("class", "axis"), ("stroke", "#555"), ("stroke-width", "1")])
    svg.line(x1: f.left, y1: bottom, x2: f.left + f.plotWidth, y2: bottom)
    svg.line(x1: f.left, y1: f.top, x2: f.left, y2: bottom)
    svg.endGroup()
    svg.beginGroup([("class", "ticks"), ("font-size", "10"), ("fill", "#333")])
    for (x, l) in xTicks { svg.text(l, x: x, y: bottom + 14, [("text-anchor", "middle")]) }
    for (y, l) in yTicks { svg.text(l, x: f.left - 6, y: y + 3.5, [("text-anchor", "end")]) }
    svg.endGroup()
    svg.text(xLabel, x: f.left + f.plotWidth / 2, y: f.height - 8,
             [("class", "axis-label"), ("text-anchor", "middle"), ("font-size", "12")])
    let cy = f.top + f.plotHeight / 2
    svg.text(yLabel, x: 14, y: cy, [("class", "axis-label"), ("text-anchor", "middle"), ("font-size", "12"),
                                     ("transform", "rotate(-90 14 \(SVG.num(cy)))")])
}
