// `drummer tab`: a DrumGrid as drum tablature for an 80-column terminal.
//
//   drum.mid: 4/4, 120 BPM, 1 bar, 8 hits on channel 10
//   bars 1-1 of 1: 8 hits, grid 16 (sixteenth notes)
//
//          bar 1
//        |1 e & a 2 e & a 3 e & a 4 e & a |
//     HH |x - x - x - x - x - x - x - x - |
//     SD |- - - - o - - - - - - - o - - - |
//     BD |o - - - - - - - o - o - - - - - |
//
// One line per drum, top to bottom: cymbals, hi-hats, toms (high to low), snares, bass
// drums, other percussion, non-GM notes; short names from GeneralMIDIDrums. Each cell is
// two columns: a glyph and a marker. Glyphs follow common drum-tab usage: cymbals and
// hi-hats `x`, drums `o`; `X`/`O` accented (velocity ≥ 110), `g` ghost (velocity < 50),
// `-` nothing. A `~` after a glyph marks a hit off the grid, drawn at its nearest cell.
// The count line names each cell: beat numbers, `e & a` for sixteenths, `t l` for
// triplets ("trip-let"), `.` for other subdivisions. Lines wrap between bars. A run of 16
// or more empty bars is one line, `bars 2-40: 39 empty bars, not drawn`.
import Foundation
import MIDIParse

public struct DrumTabStyle: Equatable, Sendable {
    /// Velocities at or above this are accents (X, O). 110 rather than 100: `drummer sample`
    /// writes 100 by default, which is a plain hit.
    public var accent: Int
    /// Velocities below this are ghost notes (g).
    public var ghost: Int
    /// Terminal width the lines are wrapped to (at least one bar per line).
    public var width: Int

    public init(accent: Int = 110, ghost: Int = 50, width: Int = 80) {
        self.accent = accent
        self.ghost = ghost
        self.width = width
    }
}

public enum DrumTab {
    /// The glyph of a hit of `velocity` on a drum of `family`.
    public static func glyph(velocity: Int, family: GeneralMIDIDrum.Family, style: DrumTabStyle = DrumTabStyle()) -> Character {
        if velocity < style.ghost { return "g" }
        let metal = family.isMetal
        if velocity >= style.accent { return metal ? "X" : "O" }
        return metal ? "x" : "o"
    }

    /// The count-line label of each cell of a bar of `denominator` on a grid of `grid`
    /// cells per whole note.
    public static func countLabels(cells: Int, denominator: Int, grid: Int) -> [String] {
        (0..<cells).map { j in
            let num = j * denominator, g = max(1, grid)
            let beat = num / g, rem = num % g
            if rem == 0 { return String(beat + 1) }
            if rem * 2 == g { return "&" }
            if rem * 4 == g { return "e" }
            if rem * 4 == 3 * g { return "a" }
            if rem * 3 == g { return "t" }
            if rem * 3 == 2 * g { return "l" }
            return "."
        }
    }

    /// A name for a grid: "sixteenth notes", "eighth-note triplets", or "20 per whole note".
    static func gridName(_ grid: Int) -> String {
        switch grid {
        case 1: return "whole notes"
        case 2: return "half notes"
        case 4: return "quarter notes"
        case 8: return "eighth notes"
        case 16: return "sixteenth notes"
        case 32: return "thirty-second notes"
        case 64: return "sixty-fourth notes"
        case 6: return "quarter-note triplets"
        case 12: return "eighth-note triplets"
        case 24: return "sixteenth-note triplets"
        case 48: return "thirty-second-note triplets"
        default: return "\(grid) cells per whole note"
        }
    }

    /// The whole tab: header, blocks of bars, legend.
    public static func render(_ grid: DrumGrid, style: DrumTabStyle = DrumTabStyle()) -> String {
        var lines: [String] = []
        func bpm(_ v: Double) -> String {
            var s = String(format: "%.1f", v)
            if s.hasSuffix(".0") { s.removeLast(2) }
            return s
        }
        // Tempo changes listed as meter changes are; past a few (a played tempo map), their range.
        let tempos = grid.tempos.isEmpty ? [grid.bpm] : grid.tempos
        let tempo = tempos.count <= 4 ? tempos.map(bpm).joined(separator: ", ") + " BPM"
            : "\(bpm(tempos.min() ?? grid.bpm))-\(bpm(tempos.max() ?? grid.bpm)) BPM (\(tempos.count) tempos)"
        let channel = grid.channel.map { "channel \($0)" } ?? "all channels"
        lines.append("\(grid.path): \(grid.meters.joined(separator: ", ")), \(tempo), "
                     + "\(plural(grid.totalBars, "bar")), \(plural(grid.totalHits, "hit")) on \(channel)")
        guard let firstBar = grid.bars.first, let lastBar = grid.bars.last else {
            lines.append(grid.totalHits == 0 ? "no hits: nothing to show" : "no bars in the range asked for")
            return lines.joined(separator: "\n") + "\n"
        }
        lines.append("bars \(firstBar.number)-\(lastBar.number + (lastBar.emptyBars ?? 1) - 1) of \(grid.totalBars): \(plural(grid.hitsShown, "hit")), "
                     + "grid \(grid.grid) (\(gridName(grid.grid)))")
        lines.append("")

        let labelWidth = max(2, grid.rows.map(\.shortName.count).max() ?? 2) + 2
        let pad = String(repeating: " ", count: labelWidth)
        let families = grid.rows.map { GeneralMIDIDrums.drum(note: $0.note).family }
        let available = max(1, style.width - labelWidth - 2)
        var start = 0
        while start < grid.bars.count {
            if start > 0 { lines.append("") }
            // A rest (a long run of empty bars) is one line, as a multi-bar rest in a drum chart.
            if let empty = grid.bars[start].emptyBars {
                let first = grid.bars[start].number
                lines.append(pad + "  bars \(first)-\(first + empty - 1): \(empty) empty bars, not drawn")
                start += 1
                continue
            }
            var end = start + 1, used = 2 * grid.bars[start].cells + 1
            while end < grid.bars.count, !grid.bars[end].isRest, used + 2 * grid.bars[end].cells + 1 <= available {
                used += 2 * grid.bars[end].cells + 1
                end += 1
            }
            var numbers = pad + "  ", counts = pad + " |"
            for b in start..<end {
                let bar = grid.bars[b], width = 2 * bar.cells + 1
                var label = "bar \(bar.number)"
                if label.count > width { label = String(String(bar.number).prefix(width)) }
                numbers += label + String(repeating: " ", count: width - label.count)
                for l in countLabels(cells: bar.cells, denominator: bar.denominator, grid: grid.grid) {
                    counts += l.count >= 2 ? String(l.suffix(2)) : l + " "
                }
                counts += "|"
            }
            lines.append(trimmed(numbers))
            lines.append(counts)
            for (r, row) in grid.rows.enumerated() {
                var line = String(repeating: " ", count: labelWidth - row.shortName.count) + row.shortName + " |"
                for b in start..<end {
                    for cell in row.bars[b] {
                        if let cell {
                            line.append(glyph(velocity: cell.velocity, family: families[r], style: style))
                            line += cell.offGrid ? "~" : " "
                        } else {
                            line += "- "
                        }
                    }
                    line += "|"
                }
                lines.append(line)
            }
            if grid.rows.isEmpty { lines.append(pad + " (no hits in these bars)") }
            start = end
        }
        lines.append("")
        lines.append("x o hit, X O accent (velocity >= \(style.accent)), g ghost (velocity < \(style.ghost)), - rest")
        if grid.offGridHits > 0 {
            let share = Int((grid.tolerance * 100).rounded())
            lines.append("~ off the grid: \(plural(grid.offGridHits, "hit")) over \(share)% of a cell "
                         + "from the nearest cell, drawn there")
        }
        if grid.mergedHits > 0 {
            lines.append("\(plural(grid.mergedHits, "hit")) shared a cell with another hit of the same drum "
                         + "(the loudest is drawn)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func plural(_ n: Int, _ word: String) -> String { n == 1 ? "1 \(word)" : "\(n) \(word)s" }

    static func trimmed(_ s: String) -> String {
        var t = s
        while t.last == " " { t.removeLast() }
        return t
    }
}
