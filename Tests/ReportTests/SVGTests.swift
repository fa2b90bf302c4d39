import Foundation
import XCTest
@testable import Report

final class SVGTests: XCTestCase {
    func testNumbersAreCompact() {
        XCTAssertEqual(SVG.num(12), "12")
        XCTAssertEqual(SVG.num(12.5), "12.5")
        XCTAssertEqual(SVG.num(-0.25), "-0.25")
        XCTAssertEqual(SVG.num(3.14159), "3.14")
        XCTAssertEqual(SVG.num(-0.001), "0")
        XCTAssertEqual(SVG.num(.nan), "0")
        XCTAssertEqual(SVG.num(.infinity), "0")
    }
}

final class SVGBuilderTests: XCTestCase {
    func testElementsEscapeTextAndAttributes() {
        var svg = SVG(width: 100, height: 50.5)
        svg.rect(x: 1, y: 2.25, width: 3, height: 4, [("class", "hit"), ("fill-opacity", "0.5")])
        svg.text("a < b & \"c\"", x: 0, y: 10, [("data-x", "1\"2")])
        svg.line(x1: 0, y1: 0, x2: 10, y2: 10)
        svg.polyline([(0, 0), (1.5, 2)], [("stroke", "red")])
        svg.polyline([])
        svg.beginGroup([("class", "g")])
        svg.element("circle", [("r", "2")], title: "tip <1>")
        svg.endGroup()
        XCTAssertEqual(svg.render(label: "A & B", className: "chart"),
                       "<svg width=\"100\" height=\"50.5\" viewBox=\"0 0 100 50.5\" role=\"img\" aria-label=\"A &amp; B\" class=\"chart\">"
                       + "<title>A &amp; B</title>"
                       + "<rect x=\"1\" y=\"2.25\" width=\"3\" height=\"4\" class=\"hit\" fill-opacity=\"0.5\"/>"
                       + "<text x=\"0\" y=\"10\" data-x=\"1&quot;2\">a &lt; b &amp; &quot;c&quot;</text>"
                       + "<line x1=\"0\" y1=\"0\" x2=\"10\" y2=\"10\"/>"
                       + "<polyline points=\"0,0 1.5,2\" fill=\"none\" stroke=\"red\"/>"
                       + "<g class=\"g\"><circle r=\"2\"><title>tip &lt;1&gt;</title></circle></g></svg>")
    }

    func testNoNetworkAddressInCharts() {
        let chart = LineChart(series: [.init(name: "train_loss", points: [(0, 1), (10, 0.5)])], xLabel: "step", yLabel: "loss")
        let svg = chart.render(label: "Loss")
        XCTAssertFalse(svg.contains("http"), "inline SVG needs no xmlns")
        XCTAssertTrue(svg.contains("class=\"axis-label\""))
        XCTAssertTrue(svg.contains(">step</text>"))
        XCTAssertTrue(svg.contains(">loss</text>"))
    }

    func testLineChartMarksTheBestStep() {
        var chart = LineChart(series: [.init(name: "validation_loss", points: [(0, 3), (100, 2), (200, 2.5)])],
                              xLabel: "step", yLabel: "loss",
                              marker: .init(x: 100, y: 2, label: "best validation: step 100"))
        chart.width = 300
        chart.height = 200
        let svg = chart.render(label: "Loss")
        XCTAssertTrue(svg.contains("<g class=\"best-marker\">"), svg)
        XCTAssertTrue(svg.contains(">best validation: step 100</text>"), svg)
        // Plot area 58...286 (x) for ticks 0...200: step 100 at x = 172; the line is there.
        XCTAssertTrue(svg.contains("<line x1=\"172\" y1=\"22\" x2=\"172\""), svg)
        XCTAssertEqual(svg.components(separatedBy: "<circle").count - 1, 4, "3 point dots + the best-step ring")
    }

    func testBarChartDrawsOneRectPerNonZeroValueWithTooltips() {
        let chart = BarChart(categories: ["SD", "BD", "HH"], tooltips: ["Acoustic Snare", "Bass Drum 1", "Closed Hi-Hat"],
                             groups: [.init(name: "generated", values: [0.5, 0.5, 0]), .init(name: "reference", values: [0.2, 0.3, 0.5])],
                             xLabel: "drum", yLabel: "share of hits")
        let svg = chart.render(label: "Notes")
        XCTAssertEqual(svg.components(separatedBy: "<rect").count - 1, 5)
        XCTAssertTrue(svg.contains("<title>Bass Drum 1, reference: 30.0%</title>"), svg)
        XCTAssertTrue(svg.contains(">60%</text>"), svg)  // y axis 0 ... 60% in steps of 20
    }
}

final class ScaleTests: XCTestCase {
    func testNiceTicksCoverTheRange() {
        XCTAssertEqual(NiceScale.ticks(lo: 0, hi: 100_000, count: 5), [0, 20_000, 40_000, 60_000, 80_000, 100_000])
        XCTAssertEqual(NiceScale.ticks(lo: 2.03, hi: 4.41, count: 5), [2, 2.5, 3, 3.5, 4, 4.5])
        let t = NiceScale.ticks(lo: 0.0156, hi: 1, count: 5)
        XCTAssertEqual(t.first, 0)
        XCTAssertEqual(t.last, 1)
        let flat = NiceScale.ticks(lo: 5, hi: 5)
        XCTAssertGreaterThanOrEqual(flat.count, 2, "a flat series still gets an axis")
        XCTAssertTrue((flat.first ?? 9) < 5 && (flat.last ?? 0) > 5, "\(flat)")
        XCTAssertEqual(NiceScale.ticks(lo: .nan, hi: 1), [0, 1])
    }

    func testLabels() {
        XCTAssertEqual(NiceScale.label(0), "0")
        XCTAssertEqual(NiceScale.label(20_000), "20k")
        XCTAssertEqual(NiceScale.label(1_500_000), "1.5M")
        XCTAssertEqual(NiceScale.label(0.25), "0.25")
        XCTAssertEqual(NiceScale.label(0.0078125), "0.0078")
    }

    /// Ticks of a narrow range get the digits their step needs: neighbours never read alike.
    func testLabelsOfANarrowRangeDiffer() {
        let constant = NiceScale.labels(NiceScale.ticks(lo: 0.001, hi: 0.001))
        XCTAssertEqual(constant, ["0.0009", "0.00095", "0.001", "0.00105", "0.0011", "0.00115"])
        let tiny = NiceScale.labels(NiceScale.ticks(lo: 0.0001, hi: 0.0001 + 19e-7))
        XCTAssertEqual(tiny, ["1e-4", "1.005e-4", "1.01e-4", "1.015e-4", "1.02e-4"])
        let steps = NiceScale.labels(NiceScale.ticks(lo: 1_000_000, hi: 1_000_500, count: 6))
        XCTAssertEqual(steps, ["1M", "1.0001M", "1.0002M", "1.0003M", "1.0004M", "1.0005M"])
        XCTAssertEqual(NiceScale.labels([0, 20_000, 40_000]), ["0", "20k", "40k"])
        XCTAssertEqual(NiceScale.labels([2, 2.5, 3]), ["2", "2.5", "3"])
        XCTAssertEqual(NiceScale.labels([0, 500, 1000, 1500]), ["0", "500", "1k", "1.5k"])
        XCTAssertEqual(NiceScale.labels([0.1, 0.2, 0.30000000000000004]), ["0.1", "0.2", "0.3"])
        XCTAssertEqual(NiceScale.labels([-0.0001, 0, 0.0001]), ["-0.0001", "0", "0.0001"])
        // The chart draws them: a constant learning rate's axis.
        let chart = LineChart(series: [.init(name: "learning_rate", points: (1...5).map { (Double($0 * 100), 0.001) })],
                              xLabel: "step", yLabel: "learning rate").render(label: "Learning rate")
        for label in constant { XCTAssertTrue(chart.contains(">\(label)</text>"), label) }
    }

    func testDownsampleKeepsEndsExtremesAndTheBestPoint() {
        let n = 1000
        var ys = (0..<n).map { 3 + sin(Double($0) / 30) }
        ys[123] = -5  // a spike
        let idx = Downsample.indices(ys, maxPoints: 100, keep: [777])
        XCTAssertLessThanOrEqual(idx.count, 100)
        XCTAssertEqual(idx, idx.sorted())
        XCTAssertEqual(Set(idx).count, idx.count)
        XCTAssertEqual(idx.first, 0)
        XCTAssertEqual(idx.last, n - 1)
        XCTAssertTrue(idx.contains(123), "the minimum survives")
        XCTAssertTrue(idx.contains(777), "a kept index survives")
        XCTAssertTrue(idx.contains(ys.indices.max { ys[$0] < ys[$1] } ?? -1), "the maximum survives")
        XCTAssertEqual(Downsample.indices([1, 2, 3], maxPoints: 500), [0, 1, 2])
        XCTAssertEqual(Downsample.indices([], maxPoints: 10), [])
    }
}
