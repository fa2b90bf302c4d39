// A drum piano roll: one row per drum (GM names, display order), time left to right over
// the first bars of a file, bar lines and beat lines, one mark per hit with its opacity
// set by velocity. Marks carry class "hit" (the browser test counts them).
import MIDIParse

public struct PianoRoll: Sendable {
    public let performance: DrumPerformance
    /// Bars drawn from the start (fewer when the file is shorter).
    public let bars: Int
    /// Most marks drawn; later hits are left out (and counted in `omitted`).
    public let maxMarks: Int

    public init(_ performance: DrumPerformance, bars: Int, maxMarks: Int = 4000) {
        self.performance = performance
        self.bars = max(1, min(bars, max(1, performance.barCount)))
        self.maxMarks = maxMarks
    }

    /// Tick where the drawing ends (the start of the first bar not drawn).
    public var endTick: Int { performance.meter.startTick(ofBar: bars) }

    /// Hits inside the bars drawn, in time order.
    var hitsShown: [MIDIHit] {
        let end = endTick
        return performance.hits.filter { $0.tick < end }
    }

    /// The SVG, and how many marks it holds and how many hits were left out past `maxMarks`.
    public func render(label: String, width: Double = 420) -> (svg: String, marks: Int, omitted: Int) {
        let inside = hitsShown
        let drawn = Array(inside.prefix(maxMarks))
        let notes = GeneralMIDIDrums.sorted(notes: inside.map { Int($0.note) })
        let rowHeight = 13.0, labelWidth = 150.0, top = 6.0, bottom = 36.0
        let plotHeight = rowHeight * Double(max(1, notes.count))
        let height = top + plotHeight + bottom
        var svg = SVG(width: labelWidth + width + 10, height: height)
        let end = Double(max(1, endTick))
        func px(_ tick: Int) -> Double { labelWidth + Double(tick) / end * width }
        let row = Dictionary(uniqueKeysWithValues: notes.enumerated().map { ($0.element, $0.offset) })

        svg.beginGroup([("class", "rows")])
        for (i, note) in notes.enumerated() {
            let y = top + Double(i) * rowHeight
            if i % 2 == 0 { svg.rect(x: labelWidth, y: y, width: width, height: rowHeight, [("fill", "#f4f4f4")]) }
            svg.text(GeneralMIDIDrums.name(note: note),
                     x: labelWidth - 6, y: y + rowHeight - 3,
                     [("text-anchor", "end"), ("font-size", "10"), ("class", "row-label")])
        }
        svg.endGroup()

        // Beat lines (light) then bar lines (dark), with bar numbers under the axis.
        let meter = performance.meter
        let starts = meter.barStartTicks(through: endTick).filter { $0 < endTick }
        svg.beginGroup([("class", "beat-lines"), ("stroke", "#d6d6d6"), ("stroke-width", "1")])
        for (b, start) in starts.enumerated() where b < bars {
            let pos = meter.position(atTick: start)
            let beat = max(1, meter.ticksPerQuarter * 4 / max(1, pos.denominator))
            let next = meter.startTick(ofBar: b + 1)
            var t = start + beat
            while t < next, t < endTick {
                svg.line(x1: px(t), y1: top, x2: px(t), y2: top + plotHeight)
                t += beat
            }
        }
        svg.endGroup()
        svg.beginGroup([("class", "bar-lines"), ("stroke", "#666"), ("stroke-width", "1")])
        for t in starts + [endTick] { svg.line(x1: px(t), y1: top, x2: px(t), y2: top + plotHeight) }
        svg.endGroup()
        svg.beginGroup([("class", "ticks"), ("font-size", "10"), ("fill", "#333")])
        for (b, t) in starts.enumerated() where b < bars {
            svg.text(String(b + 1), x: px(t) + 3, y: top + plotHeight + 12)
        }
        svg.endGroup()
        svg.text("bar", x: labelWidth + width / 2, y: height - 6,
                 [("class", "axis-label"), ("text-anchor", "middle"), ("font-size", "12")])

        // One mark per hit: at least 2 px wide, a 32nd note where that is wider.
        let w = max(2, Double(meter.ticksPerQuarter) / 8 / end * width)
        var colorIndex: [GeneralMIDIDrum.Family: Int] = [:]
        for fam in [GeneralMIDIDrum.Family.cymbal, .hiHat, .tom, .snare, .kick, .percussion, .other] {
            colorIndex[fam] = colorIndex.count
        }
        svg.beginGroup([("class", "hits")])
        for h in drawn {
            guard let r = row[Int(h.note)] else { continue }
            let fam = GeneralMIDIDrums.drum(note: Int(h.note)).family
            let opacity = 0.15 + 0.85 * Double(h.velocity) / 127
            svg.rect(x: px(h.tick), y: top + Double(r) * rowHeight + 1.5, width: w, height: rowHeight - 3,
                     [("class", "hit"), ("fill", Palette.color(colorIndex[fam] ?? 0)), ("fill-opacity", SVG.num(opacity))])
        }
        svg.endGroup()
        return (svg.render(label: label, className: "roll"), drawn.count, inside.count - drawn.count)
    }
}
