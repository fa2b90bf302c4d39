// The grid layout's view of a dataset (DrummerCore/GridGroup.swift): each 4/4 file of a split
// as 16th-note steps, read from events.npy and onsets.npy (without it, onsets are the sum of the deltas), positions.npy
// (bar lines) and velocities.npy, with the file ranges of manifest.json. A hit goes to the
// nearest 16th of the bar grid that starts at its file's first bar line; its offset is the
// rest (−ticksPerStep/2 ≤ offset < ticksPerStep/2). Two or more hits of one class in one 16th
// are one double grid hit (the first's offset and velocity; written back as two hits a 32nd
// apart). Notes outside Magenta's 9 classes are left
// out. Files not in 4/4 are left out, and counted.

import DrummerCore
import MIDIParse

/// A split as grid hits per file.
public struct GridFiles: Sendable {
    /// Per kept file: its path (manifest.json's), its hits in step order and its steps (last
    /// hit's step + 1).
    public var files: [(path: String, hits: [GridHit], steps: Int)]
    /// Files left out, with why.
    public var skipped: [(path: String, reason: String)]
    /// Hits after the first of a class in one 16th (the first becomes a double hit).
    public var merged: Int
    /// Hits whose note has no drum class.
    public var unmapped: Int
    /// Hits kept.
    public var hits: Int { files.reduce(0) { $0 + $1.hits.count } }
    public var steps: Int { files.reduce(0) { $0 + $1.steps } }
}

extension TrainingData {
    /// Velocity bins of a new grid model (shared by the classes, chosen by quantiles).
    public static let defaultGridVelocityBins = 16

    /// The grid hits of `split` (the training split, or validation/ when `validation`).
    public func gridFiles(validation: Bool) throws -> GridFiles {
        guard let split = validation ? validationSplit : training else {
            return GridFiles(files: [], skipped: [], merged: 0, unmapped: 0)
        }
        guard let positions = split.positions else {
            throw DatasetError.missingGroup(path: split.path, group: "grid", file: "positions.npy")
        }
        guard let velocities = split.velocities else {
            throw DatasetError.missingGroup(path: split.path, group: "grid", file: "velocities.npy")
        }
        let ranges = files.filter { $0.validation == validation }
        guard !ranges.isEmpty || split.count == 0 else {
            throw DatasetError.missingFile(path: path + "/manifest.json", expected:
                "the grid layout needs manifest.json's files (where each file's hits lie in events.npy): convert the dataset again with this drummer")
        }
        let ppq = self.ppq, bar = 4 * ppq, T = ppq / 4
        guard ppq % 4 == 0 else {
            throw DatasetError.invalid(path: path + "/manifest.json", reason: "settings.ppq \(ppq) is not a multiple of 4: a 16th note has no whole number of ticks")
        }
        let tickValues = vocabulary.ixToTick, noteValues = vocabulary.ixToNote
        var out = GridFiles(files: [], skipped: [], merged: 0, unmapped: 0)
        for f in ranges {
            guard f.offset >= 0, f.hits >= 0, f.offset + f.hits <= split.count else {
                throw DatasetError.invalid(path: path + "/manifest.json", reason:
                    "file \(f.path): hits \(f.offset)..<\(f.offset + f.hits) lie outside the \(split.count) hits of \(split.path)/events.npy")
            }
            var onsets: [Int] = [], classes: [Int] = [], hitVelocities: [Int] = [], notes: [Int] = []
            // The file's onsets (from its first hit) and bars, counted as the grid counts them
            // (a pickup, a short last bar: GridGroup.countBars).
            var times: [Int] = [], pos: [Int] = [], length: [Int] = []
            // From onsets.npy where the dataset has it (exact where a validation hit was left out
            // or a delta clamped), else the sum of the deltas.
            var t = 0
            for e in f.offset..<(f.offset + f.hits) {
                if let o = split.onsets {
                    guard e == f.offset || o[e] >= o[e - 1] else {
                        throw DatasetError.invalid(path: split.path + "/onsets.npy", reason:
                            "hit \(e): onset \(o[e]) lies before the one before it, \(o[e - 1]), in file \(f.path)")
                    }
                    t = Int(o[e]) - Int(o[f.offset])
                } else if e > f.offset {
                    t += tickValues[Int(split.events[2 * e + 1])]
                }
                times.append(t)
                pos.append(Int(positions[2 * e]))
                length.append(Int(positions[2 * e + 1]))
            }
            // A file mostly in another meter is named by it; one mostly in 4/4 by its first hit
            // the model cannot read. (The manifest's meter alone would leave out a 4/4 beat
            // whose pickup holds most of its hits.)
            var reason: String?
            let meter = f.meter.flatMap { $0 == "4/4" ? nil : "meter \($0)" }
            // Where a hit is (its tick in the file, with onsets.npy).
            func hit(_ i: Int) -> String {
                "hit \(i)" + (split.onsets.map { " (at tick \($0[f.offset + i]) from the file's start, \(ppq) ticks per quarter note)" } ?? "")
            }
            switch GridGroup.countBars(onsets: times, tickInBar: &pos, barTicks: &length, bar: bar) {
            case nil: break
            case .notFourFour(let i, let ticks):
                reason = meter ?? "\(hit(i)) lies in a bar of \(ticks) ticks, not 4/4's \(bar)"
            case .offTheBarLines(let i):
                reason = meter ?? "\(hit(i)) lies in a bar off the 4/4 bar lines before it (an empty bar of another length lies between"
                    + (split.onsets == nil ? ", or a delta was clamped or a hit left out: convert the dataset again)" : ")")
            }
            let firstBar = times.isEmpty ? 0 : times[0] - pos[0]
            var unmapped = 0
            for (k, e) in (f.offset..<(f.offset + f.hits)).enumerated() where reason == nil {
                let t = times[k]
                let note = noteValues[Int(split.events[2 * e])]
                guard let c = DrumClasses.of(note: note) else {
                    unmapped += 1
                    continue
                }
                onsets.append(t - firstBar)
                classes.append(c)
                hitVelocities.append(Int(velocities[e]))
                notes.append(note)
            }
            if let reason {
                out.skipped.append((f.path, reason))
                continue
            }
            let hits = GridGroup.cells(ticksPerStep: T, onsets: onsets, classes: classes, velocities: hitVelocities, notes: notes).hits
            out.merged += onsets.count - hits.count
            out.unmapped += unmapped
            guard let last = hits.last else { continue }
            // Every step is read, empty bars too: a file of a few hits far apart would be minutes
            // of work and gigabytes of rows (FileHits.maximumBarsRead says why the limit).
            let bars = last.step / GridGroup.stepsPerBar + 1
            guard bars <= FileHits.maximumBarsRead else {
                out.skipped.append((f.path, "its hits span \(bars) bars, more than the \(FileHits.maximumBarsRead) a grid model reads of one file"))
                continue
            }
            out.files.append((f.path, hits, last.step + 1))
        }
        return out
    }

    /// The grid group of a new model on this dataset: velocity bins by quantiles of the training
    /// grid hits, each class's notes counted, `offsetBins` offset bins (default: one per --quantize step in a 16th when
    /// that is 1...8, else 8), each written at its training hits' mean offset; a style input
    /// when `styles` names a rule (the styles of the training files).
    public func gridGroup(velocityBins: Int = TrainingData.defaultGridVelocityBins, offsetBins: Int? = nil,
                          lookback: GridLookback = .classes, lookbackBars: [Int] = GridGroup.defaultLookbackBars,
                          styles: GridStyleRule? = nil) throws -> GridGroup {
        let grid = try gridFiles(validation: false)
        guard grid.hits > 0 else {
            throw DatasetError.invalid(path: path, reason: "no 4/4 file with drum hits: the grid layout needs 4/4 files"
                + (grid.skipped.isEmpty ? "" : " (left out: " + grid.skipped.prefix(3).map { "\($0.path): \($0.reason)" }.joined(separator: "; ") + ")")
                + "; train --recipe original trains the 2017 model, which reads files in any meter")
        }
        let T = ppq / 4
        let f = offsetBins ?? quantize.flatMap { q in q > 0 && T % q == 0 && T / q <= 8 ? T / q : nil } ?? 8
        var histogram = [Int](repeating: 0, count: 127)
        var sums = [Int](repeating: 0, count: f), counts = [Int](repeating: 0, count: f)
        var noteCounts = [[Int]](repeating: [Int](repeating: 0, count: 128), count: GridGroup.classCount)
        func bin(_ offset: Int) -> Int { GridGroup.offsetBin(of: offset, ticksPerStep: T, bins: f) }
        let starts = (0..<f).map { GridGroup.offsetBinStart($0, ticksPerStep: T, bins: f) }
        for file in grid.files {
            for h in file.hits {
                histogram[h.velocity - 1] += 1
                noteCounts[h.drumClass][h.note] += 1
                let b = bin(h.offset)
                sums[b] += h.offset
                counts[b] += 1
            }
        }
        let offsets = (0..<f).map { b in
            counts[b] > 0 ? Int((Double(sums[b]) / Double(counts[b])).rounded(.down)) : starts[b]
        }
        return try GridGroup(ppq: ppq, velocity: try VelocityGroup.quantileBins(histogram: histogram, count: velocityBins),
                             offsets: offsets.enumerated().map { b, o in bin(o) == b ? o : starts[b] },
                             notes: DrumClasses.representatives, noteCounts: noteCounts,
                             offsetCoupling: Self.offsetCoupling(grid, bin: bin, bins: f), lookback: lookback,
                             lookbackBars: lookbackBars, styles: try styles.map { try GridStyles(rule: $0, files: grid.files.map { ($0.path, $0.steps) }) })
    }

    /// The style rule a new grid run reads from the data when it is given none: the Groove MIDI
    /// Dataset's drummer and style (`groove-drummer-names`) when every training file lies in a
    /// drummer's folder and is named so, else its style alone (`groove-names`) when every file
    /// is named so, else the folder each file lies in (`folders`); kept only when it gives two or more
    /// styles of `GridStyles.minimumFiles` training files or more (a single style would be no
    /// input at all). nil: no style input. Returns the styles it found too.
    public func dataStyles() throws -> (rule: GridStyleRule, styles: GridStyles)? {
        let files = try gridFiles(validation: false).files.map { (path: $0.path, steps: $0.steps) }
        guard !files.isEmpty else { return nil }
        let rule = [GridStyleRule.grooveDrummerNames, .grooveNames].first { r in files.allSatisfy { r.style(ofPath: $0.path) != nil } }
            ?? .folders
        let styles = try GridStyles(rule: rule, files: files)
        return styles.count >= 3 ? (rule, styles) : nil
    }

    /// The offset coupling a (GridGroup.offsetCoupling) of these files, by the method of moments:
    /// over every pair of classes hit in one step, the observed share r with the same offset
    /// bin, the share r_ind that independent draws from each class's offset-bin distribution
    /// give, and r_co that one shared uniform number gives (comonotone draws); then
    /// a = (r − r_ind) / (r_co − r_ind), clamped to [0, 1].
    static func offsetCoupling(_ grid: GridFiles, bin: (Int) -> Int, bins F: Int) -> Double {
        let C = GridGroup.classCount
        var counts = [[Double]](repeating: [Double](repeating: 0, count: F), count: C)
        for file in grid.files { for h in file.hits { counts[h.drumClass][bin(h.offset)] += 1 } }
        let p = counts.map { row -> [Double] in
            let t = row.reduce(0, +)
            return t > 0 ? row.map { $0 / t } : row
        }
        func cdf(_ c: Int) -> [Double] { var a = 0.0; return p[c].map { a += $0; return a } }
        let cdfs = (0..<C).map(cdf)
        var pairs = 0.0, same = 0.0, independent = 0.0, comonotone = 0.0
        for file in grid.files {
            var i = 0
            while i < file.hits.count {
                var j = i
                while j < file.hits.count, file.hits[j].step == file.hits[i].step { j += 1 }
                for a in i..<j {
                    for b in (a + 1)..<j {
                        let ca = file.hits[a].drumClass, cb = file.hits[b].drumClass
                        pairs += 1
                        if bin(file.hits[a].offset) == bin(file.hits[b].offset) { same += 1 }
                        for k in 0..<F {
                            independent += p[ca][k] * p[cb][k]
                            let lo = max(k > 0 ? cdfs[ca][k - 1] : 0, k > 0 ? cdfs[cb][k - 1] : 0)
                            comonotone += max(0, min(cdfs[ca][k], cdfs[cb][k]) - lo)
                        }
                    }
                }
                i = j
            }
        }
        guard pairs > 0, comonotone - independent > 1e-9 else { return 0 }
        return min(1, max(0, (same - independent) / (comonotone - independent)))
    }

    /// The grid sequences of a split: one per kept file.
    public func gridSequences(validation: Bool, group: GridGroup) throws -> (sequences: [GridSequence], files: GridFiles) {
        let grid = try gridFiles(validation: validation)
        return (grid.files.map { group.sequence($0.hits, steps: $0.steps, style: group.styles?.index(ofPath: $0.path) ?? 0) }, grid)
    }

    /// The grid class matrix of a split: each kept file's rows (its start row, then one per
    /// step), one file after another: in the dataset's order, or shuffled with `shuffleSeed`
    /// (`fileOrder(count:seed:)`); `fileRows`: each file's row count, in that order.
    public func gridClasses(validation: Bool, group: GridGroup, shuffleSeed: UInt64? = nil) throws
        -> (classes: [Int32], files: GridFiles, fileRows: [Int])
    {
        let (sequences, grid) = try gridSequences(validation: validation, group: group)
        let encoder = GridEncoder(group: group)
        var out: [Int32] = []
        let rows = sequences.reduce(0) { $0 + $1.count + 1 }
        // (A failed allocation would crash: refused first, with a little room for each file's rows
        // on their way; the trainer's check, once the matrices are read, counts the rest.)
        if let shortfall = ModelLimits.addressSpaceShortfall(for: 4 * rows * encoder.inputCount, reserve: 64 << 20) {
            throw DatasetError.invalid(path: validation ? path + "/validation" : path,
                                       reason: "its \(rows) grid rows of \(encoder.inputCount) input groups \(shortfall)")
        }
        out.reserveCapacity(rows * encoder.inputCount)
        let order = shuffleSeed.map { Self.fileOrder(count: sequences.count, seed: $0) } ?? Array(sequences.indices)
        var fileRows: [Int] = []
        for i in order {
            let rows = encoder.rows(of: sequences[i])
            out += rows
            fileRows.append(rows.count / encoder.inputCount)
        }
        return (out, grid, fileRows)
    }

    /// For files of `rows` rows each, one after another: whether each row is a file's first.
    public static func fileStarts(rows: [Int]) -> [Bool] {
        var starts = [Bool](repeating: false, count: rows.reduce(0, +))
        var r = 0
        for n in rows where n > 0 {
            starts[r] = true
            r += n
        }
        return starts
    }

    /// The order `--shuffle-files` trains `count` files in: a Fisher–Yates shuffle driven by a
    /// SeededRNG of the run's seed (mixed with "shuffle", so that it draws apart from the
    /// initialisation's numbers).
    public static func fileOrder(count: Int, seed: UInt64) -> [Int] {
        var rng = SeededRNG(seed: seed ^ 0x7368_7566_666C_6500)  // "shuffle"
        var order = Array(0..<count)
        for i in stride(from: count - 1, to: 0, by: -1) { order.swapAt(i, rng.index(below: i + 1)) }
        return order
    }
}
