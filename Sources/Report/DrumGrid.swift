// The grid behind `drummer tab` (and its --json): bars cut into cells, one row per drum.
//
// A grid of G cells per whole note (G = 16: sixteenths) gives a bar of n/d
// n × G / d cells (4/4: 16, 6/8: 12, 3/4: 12), rounded up when not whole. A hit goes to
// the nearest cell; it is off the grid when it lies more than `tolerance` of a cell from
// that cell's time (default 1/4: human timing stays on the grid, triplets on a 16 grid do
// not). A hit nearest to the next bar line belongs to that bar's first cell. Several hits
// of one drum in one cell are drawn as the loudest; an off-grid one marks the cell.
import MIDIParse

public struct DrumGridOptions: Equatable, Sendable {
    /// Cells per whole note: 16 = sixteenths, 12 = eighth-note triplets, 24 = sixteenth triplets.
    public var grid: Int
    /// First bar shown, 0-based.
    public var firstBar: Int
    /// Bars shown; nil for every bar up to the last hit.
    public var bars: Int?
    /// Largest distance from a cell's time, in cells, at which a hit is on the grid (0 ..< 0.5).
    public var tolerance: Double

    public init(grid: Int = 16, firstBar: Int = 0, bars: Int? = nil, tolerance: Double = 0.25) {
        self.grid = grid
        self.firstBar = firstBar
        self.bars = bars
        self.tolerance = tolerance
    }
}

public struct DrumGrid: Codable, Equatable, Sendable {
    public struct Bar: Codable, Equatable, Sendable {
        /// 1-based bar number.
        public var number: Int
        public var startTick: Int
        /// Ticks to the next bar line.
        public var ticks: Int
        public var numerator: Int
        public var denominator: Int
        public var cells: Int
    }

    public struct Cell: Codable, Equatable, Sendable {
        /// Velocity of the loudest hit in the cell.
        public var velocity: Int
        /// Hits of this drum in the cell.
        public var hits: Int
        /// True when a hit in the cell lies more than the tolerance from the cell's time.
        var offGrid: Bool
        /// Distance of the loudest hit from the cell's time, in cells (negative: early).
        public var offset: Double
    }

    public struct Row: Codable, Equatable, Sendable {
        public var note: Int
        public var name: String
        public var shortName: String
        /// Hits of this drum in the bars shown.
        public var hits: Int
        /// One array per bar shown, one entry per cell: nil where the drum is silent.
        public var bars: [[Cell?]]
    }

    public var path: String
    public var ticksPerQuarter: Int
    /// Tempo at the start, beats (quarter notes) per minute.
    public var bpm: Double
    /// Time signatures of the file in order, e.g. ["4/4"] or ["4/4", "3/4"].
    public var meters: [String]
    /// The channel read (1-based), nil for every channel.
    public var channel: Int?
    public var grid: Int
    public var tolerance: Double
    /// Bars in the file, up to its last hit.
    var totalBars: Int
    var totalHits: Int
    public var bars: [Bar]
    /// Drums in display order (cymbals, hi-hat, toms, snare, kick, other percussion, non-GM notes).
    public var rows: [Row]
    /// Hits drawn in the bars shown.
    var hitsShown: Int
    var offGridHits: Int
    /// Hits sharing a cell with another hit of the same drum (drawn once).
    package var mergedHits: Int
}

extension DrumGrid {
    /// Lays the hits of `performance` on a grid.
    public init(_ performance: DrumPerformance, options: DrumGridOptions = DrumGridOptions()) {
        let meter = performance.meter
        let tpq = meter.ticksPerQuarter
        let g = max(1, options.grid)
        let cellTicks = Double(4 * tpq) / Double(g)
        // Cells in a bar of `ticks` ticks: rounded up when the bar is not a whole number of cells.
        func cellCount(_ ticks: Int) -> Int { max(1, Int((Double(ticks) / cellTicks - 1e-9).rounded(.up))) }
        // Bars up to the last hit's, and one more when that hit is nearest the next bar line.
        var total = performance.barCount
        if let lastTick = performance.hits.map(\.tick).max() {
            let bar = meter.position(atTick: lastTick).bar
            let start = meter.startTick(ofBar: bar)
            if Int((Double(lastTick - start) / cellTicks).rounded()) >= cellCount(meter.startTick(ofBar: bar + 1) - start) {
                total += 1
            }
        }
        let first = max(0, options.firstBar)
        let last = options.bars.map { min(total, first + min(max(0, $0), total)) } ?? total  // exclusive

        var bars: [Bar] = []
        if first < last {
            for b in first..<last {
                let start = meter.startTick(ofBar: b)
                let next = meter.startTick(ofBar: b + 1)
                let pos = meter.position(atTick: start)
                let ticks = next == Int.max ? pos.barTicks : next - start
                let cells = cellCount(ticks)
                bars.append(Bar(number: b + 1, startTick: start, ticks: ticks,
                                numerator: pos.numerator, denominator: pos.denominator, cells: cells))
            }
        }

        // Place every hit of the shown bars (and of the bar before: its last hits may round
        // onto the first shown bar line).
        var cellsByNote: [Int: [[Cell?]]] = [:]
        var hitsByNote: [Int: Int] = [:]
        var shown = 0, offGrid = 0, merged = 0
        let tol = options.tolerance + 1e-9
        for h in performance.hits {
            let pos = meter.position(atTick: h.tick)
            guard pos.bar >= first - 1, pos.bar < last else { continue }
            var bar = pos.bar
            let exact = Double(h.tick - meter.startTick(ofBar: bar)) / cellTicks
            var cell = Int(exact.rounded())
            let offset = exact - Double(cell)
            let cellsInBar = bar >= first ? bars[bar - first].cells
                : cellCount(meter.startTick(ofBar: bar + 1) - meter.startTick(ofBar: bar))
            if cell >= cellsInBar {
                bar += 1
                cell = 0
            }
            guard bar >= first, bar < last else { continue }
            let note = Int(h.note)
            var rowBars = cellsByNote[note] ?? bars.map { [Cell?](repeating: nil, count: $0.cells) }
            let isOff = abs(offset) > tol
            if isOff { offGrid += 1 }
            shown += 1
            hitsByNote[note, default: 0] += 1
            let bi = bar - first
            if var existing = rowBars[bi][cell] {
                merged += 1
                existing.hits += 1
                existing.offGrid = existing.offGrid || isOff
                if Int(h.velocity) > existing.velocity {
                    existing.velocity = Int(h.velocity)
                    existing.offset = offset
                }
                rowBars[bi][cell] = existing
            } else {
                rowBars[bi][cell] = Cell(velocity: Int(h.velocity), hits: 1, offGrid: isOff, offset: offset)
            }
            cellsByNote[note] = rowBars
        }
        let rows = GeneralMIDIDrums.sorted(notes: cellsByNote.keys).map { note -> Row in
            let d = GeneralMIDIDrums.drum(note: note)
            return Row(note: note, name: d.name, shortName: d.shortName, hits: hitsByNote[note] ?? 0,
                       bars: cellsByNote[note] ?? [])
        }
        var meters: [String] = []
        for seg in meter.segments {
            let m = "\(seg.numerator)/\(seg.denominator)"
            if meters.last != m { meters.append(m) }
        }
        self.init(path: performance.path, ticksPerQuarter: tpq, bpm: performance.initialBPM, meters: meters,
                  channel: performance.channel.map { $0 + 1 },
                  grid: g, tolerance: options.tolerance, totalBars: total, totalHits: performance.hits.count,
                  bars: bars, rows: rows, hitsShown: shown, offGridHits: offGrid, mergedHits: merged)
    }
}
