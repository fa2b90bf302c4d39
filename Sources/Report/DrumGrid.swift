// The grid behind `drummer tab` (and its --json): bars cut into cells, one row per drum.
//
// A grid of G cells per whole note (G = 16: sixteenths) gives a bar of n/d
// n × G / d cells (4/4: 16, 6/8: 12, 3/4: 12), rounded up when not whole. A hit goes to
// the nearest cell; it is off the grid when it lies more than `tolerance` of a cell from
// that cell's time (default 1/4: human timing stays on the grid, triplets on a 16 grid do
// not). A hit nearest to the next bar line and within the tolerance of it is that bar's
// downbeat, played early: it belongs to that bar's first cell. One further early is not a
// downbeat (a pickup before the bar line): it stays in its own bar, off the grid at the last
// cell, and never makes a bar of its own. Several hits of one drum in one cell are drawn as
// the loudest; an off-grid one marks the cell.
//
// A run of `DrumGrid.restThreshold` or more empty bars is one entry, a rest of that many
// bars (as a drum chart writes a multi-bar rest): two hits far apart in a small file can
// span millions of bars, and the grid's size (and the tab's) must follow the hits, not
// the silence between them.
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
        /// Set on a rest: the entry stands for this many empty bars from `number` on, with no
        /// cells (`ticks` spans them all, the meter is the first's); nil for a bar drawn cell
        /// by cell.
        public var emptyBars: Int? = nil

        /// True when the entry is a run of empty bars rather than one bar of cells.
        public var isRest: Bool { emptyBars != nil }
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
        /// One array per bar shown, one entry per cell: nil where the drum is silent (empty
        /// for a rest).
        public var bars: [[Cell?]]
    }

    public var path: String
    public var ticksPerQuarter: Int
    /// Tempo at the start, beats (quarter notes) per minute.
    public var bpm: Double
    /// Tempos of the file in order, beats per minute: `bpm`, then each change to another.
    public var tempos: [Double]
    /// Time signatures of the file in order, e.g. ["4/4"] or ["4/4", "3/4"].
    public var meters: [String]
    /// The channel read (1-based), nil for every channel.
    public var channel: Int?
    public var grid: Int
    public var tolerance: Double
    /// Bars in the file, up to its last hit.
    public internal(set) var totalBars: Int
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
    /// Runs of at least this many empty bars are one rest entry. Longer than the tab's default
    /// page of 8 bars, so that default view is always drawn bar by bar; a shorter break is
    /// drawn too, as a drummer counts it, while a 16-bar tacet or more reads better as one line.
    public static let restThreshold = 16

    /// Lays the hits of `performance` on a grid.
    public init(_ performance: DrumPerformance, options: DrumGridOptions = DrumGridOptions()) {
        let meter = performance.meter
        let tpq = meter.ticksPerQuarter
        let g = max(1, options.grid)
        let cellTicks = Double(4 * tpq) / Double(g)
        // Cells in a bar of `ticks` ticks: rounded up when the bar is not a whole number of cells.
        func cellCount(_ ticks: Int) -> Int { max(1, Int((Double(ticks) / cellTicks - 1e-9).rounded(.up))) }
        let tol = options.tolerance + 1e-9

        // The bar and cell of each hit: its nearest cell; when that cell is the next bar line,
        // the next bar's first cell if within the tolerance of it, else its own bar's last.
        func barTicks(_ b: Int, start: Int) -> Int {
            let next = meter.startTick(ofBar: b + 1)
            return next == Int.max ? meter.position(atTick: start).barTicks : next - start
        }
        func place(_ tick: Int) -> (bar: Int, cell: Int, offset: Double) {
            let bar = meter.position(atTick: tick).bar
            let start = meter.startTick(ofBar: bar)
            let exact = Double(tick - start) / cellTicks
            let cell = Int(exact.rounded())
            let cells = cellCount(barTicks(bar, start: start))
            if cell >= cells {
                if abs(exact - Double(cell)) <= tol { return (bar + 1, 0, exact - Double(cell)) }
                return (bar, cells - 1, exact - Double(cells - 1))
            }
            return (bar, cell, exact - Double(cell))
        }
        let placed = performance.hits.map { (hit: $0, at: place($0.tick)) }
        // Bars up to the last hit's, and one more when that hit is the next bar's early downbeat.
        let total = max(performance.barCount, placed.map { $0.at.bar + 1 }.max() ?? 0)
        let first = max(0, options.firstBar)
        // exclusive; a first bar past the last is refused below (and would overflow the sum)
        let last = options.bars.map { first >= total ? total : min(total, first + min(max(0, $0), total)) } ?? total
        let occupied = Set(placed.lazy.map(\.at.bar).filter { $0 >= first && $0 < last }).sorted()

        // The entries shown: every bar with a hit, the bars between two of them, and a rest for
        // each run of `restThreshold` or more empty bars. Only the entries are built, so the
        // work follows the hits, however many bars lie between them.
        var bars: [Bar] = []
        var index: [Int: Int] = [:]  // bar number (0-based) -> its entry in `bars`
        func appendBar(_ b: Int) {
            let start = meter.startTick(ofBar: b)
            let pos = meter.position(atTick: start)
            let ticks = barTicks(b, start: start)
            index[b] = bars.count
            bars.append(Bar(number: b + 1, startTick: start, ticks: ticks,
                            numerator: pos.numerator, denominator: pos.denominator, cells: cellCount(ticks)))
        }
        func appendEmpty(_ from: Int, _ to: Int) {  // bars from ..< to, all empty
            guard from < to else { return }
            if to - from < Self.restThreshold {
                for b in from..<to { appendBar(b) }
                return
            }
            let start = meter.startTick(ofBar: from)
            let end = meter.startTick(ofBar: to)
            let pos = meter.position(atTick: start)
            bars.append(Bar(number: from + 1, startTick: start, ticks: end == Int.max ? Int.max : end - start,
                            numerator: pos.numerator, denominator: pos.denominator, cells: 0, emptyBars: to - from))
        }
        var cursor = first
        for b in occupied {
            appendEmpty(cursor, b)
            appendBar(b)
            cursor = b + 1
        }
        appendEmpty(cursor, max(cursor, last))

        // Place every hit of the shown bars (a hit of the bar before the first may round onto
        // its bar line).
        // Rows are filled in place (one array per drum, indexed through `rowOf`): copying a
        // drum's bars for every hit would make the work hits × bars.
        var rowOf: [Int: Int] = [:]
        var rowNotes: [Int] = [], rowCells: [[[Cell?]]] = [], rowHits: [Int] = []
        var shown = 0, offGrid = 0, merged = 0
        for (h, at) in placed {
            guard let bi = index[at.bar] else { continue }
            let (cell, offset) = (at.cell, at.offset)
            let note = Int(h.note)
            let r: Int
            if let known = rowOf[note] {
                r = known
            } else {
                r = rowNotes.count
                rowOf[note] = r
                rowNotes.append(note)
                rowCells.append(bars.map { [Cell?](repeating: nil, count: $0.cells) })
                rowHits.append(0)
            }
            let isOff = abs(offset) > tol
            if isOff { offGrid += 1 }
            shown += 1
            rowHits[r] += 1
            if var existing = rowCells[r][bi][cell] {
                merged += 1
                existing.hits += 1
                existing.offGrid = existing.offGrid || isOff
                if Int(h.velocity) > existing.velocity {
                    existing.velocity = Int(h.velocity)
                    existing.offset = offset
                }
                rowCells[r][bi][cell] = existing
            } else {
                rowCells[r][bi][cell] = Cell(velocity: Int(h.velocity), hits: 1, offGrid: isOff, offset: offset)
            }
        }
        let rows = GeneralMIDIDrums.sorted(notes: rowNotes).compactMap { note -> Row? in
            guard let r = rowOf[note] else { return nil }
            let d = GeneralMIDIDrums.drum(note: note)
            return Row(note: note, name: d.name, shortName: d.shortName, hits: rowHits[r], bars: rowCells[r])
        }
        var meters: [String] = []
        for seg in meter.segments {
            let m = "\(seg.numerator)/\(seg.denominator)"
            if meters.last != m { meters.append(m) }
        }
        self.init(path: performance.path, ticksPerQuarter: tpq, bpm: performance.initialBPM, tempos: performance.tempos, meters: meters,
                  channel: performance.channel.map { $0 + 1 },
                  grid: g, tolerance: options.tolerance, totalBars: total, totalHits: performance.hits.count,
                  bars: bars, rows: rows, hitsShown: shown, offGridHits: offGrid, mergedHits: merged)
    }
}
