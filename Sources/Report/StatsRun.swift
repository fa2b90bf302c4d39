// `drummer stats GENERATED... --reference DATA`: reads the inputs, measures both sides
// (GrooveStats) and renders the figures as a table or JSON. The CLI only parses options and
// prints.
import DrummerCore
import Foundation
import MIDIParse
import ModelFiles
import FileOutput

public struct StatsRequest: Sendable {
    /// Generated (or any) drum MIDI files.
    public var generated: [String]
    /// A convert-midi dataset, a folder of MIDI files or one MIDI file.
    public var reference: String
    /// Grid onsets are snapped to when MIDI files are read (convert-midi's --quantize).
    public var quantize: Int?
    /// Grid tolerance, in sixteenths.
    public var tolerance = Self.defaultTolerance
    /// An onset within an eighth of a sixteenth of a grid line is on it (stats' and choose-step's
    /// default; humanize says how many hits lie farther).
    public static let defaultTolerance = 0.125
    /// Which rows of a dataset reference are read.
    public var split: DatasetSplit = .training
    public var channel: ChannelSelection = .auto
    /// Recover defective MIDI files (with a warning each) instead of skipping them.
    public var lenient = false
    /// Hits the generated files should hold together (a target when given).
    public var expectedHits: Int?
    /// Compare notes as written; by default both sides' notes are read as the ones a General
    /// MIDI kit sounds (`GeneralMIDIDrums.audible`: 22 as 42, 26 as 46, …), which is what
    /// `drummer sample` writes.
    public var rawNotes = false

    public init(generated: [String], reference: String) {
        self.generated = generated
        self.reference = reference
    }
}

/// Why `drummer stats` cannot measure.
public enum StatsError: Error, Equatable, CustomStringConvertible {
    /// No generated file could be measured: one line per file, each naming it.
    case noGeneratedHits([String])

    public var description: String {
        switch self {
        case .noGeneratedHits(let lines):
            return lines.count == 1 ? lines[0]
                : "none of the \(lines.count) generated files could be measured: " + lines.joined(separator: "; ")
        }
    }
}

public struct StatsRun: Sendable {
    public var request: StatsRequest
    public var result: StatsResult
    var referenceKind: String
    /// The dataset split read (nil for MIDI references).
    var referenceSplit: DatasetSplit?
    /// Generated files measured.
    public var measured: [String]
    /// One line per input left out (a generated file, a reference file), naming it.
    public var warnings: [String]
    /// What the figures rest on: the reference's remarks, setting mismatches, n/a reasons.
    public var notes: [String]

    /// Reads every input and measures.
    /// - Throws: `ReportError` for the reference (missing, empty, a dataset whose arrays
    ///   disagree), `StatsError.noGeneratedHits` when no generated file can be measured.
    public static func measure(_ request: StatsRequest, progress: ((String) -> Void)? = nil) throws -> StatsRun {
        var settings = HitExtractionSettings()
        settings.channel = request.channel
        settings.quantize = request.quantize
        settings.parseMode = request.lenient ? .lenient : .safe
        var warnings: [String] = [], problems: [String] = []

        // Generated files first: a typo fails before the reference is read.
        var performances: [DrumPerformance] = []
        for path in request.generated {
            do {
                let p = try DrumPerformance.load(path: path, channel: request.channel, mode: request.lenient ? .lenient : .safe)
                for w in p.warnings { warnings.append("\(w)") }
                guard !p.hits.isEmpty else { throw ReportError.noDrums(path: path, channels: request.channel.searched) }
                performances.append(p)
            } catch {
                problems.append(FileManager.default.fileExists(atPath: path)
                                ? "\(error)" : ReportError.missingPath(path: path, what: "MIDI file").description)
            }
        }
        guard !performances.isEmpty else { throw StatsError.noGeneratedHits(problems) }

        progress?("reading the reference \(request.reference)")
        let reference = try ReferenceSet.load(path: request.reference, settings: settings, split: request.split,
                                               splitOption: "--split")
        warnings += reference.readingWarnings
        // Without --quantize, a dataset reference's own grid: the generated files are read as
        // its onsets were (as `drummer report` does).
        var request = request
        if request.quantize == nil, reference.kind == "convert-midi dataset", let q = reference.quantize {
            request.quantize = q
        }
        var run = measure(performances, against: reference, request: request)
        // measure(_:against:request:) warns only about generated files it left out.
        let leftOut = problems + run.warnings
        guard !run.measured.isEmpty else { throw StatsError.noGeneratedHits(leftOut) }
        run.warnings = warnings
            + leftOut.map { "\($0); left out (\(run.measured.count) of \(request.generated.count) generated files measured)" }
        return run
    }

    /// Measures files already read against a reference already loaded (`drummer report`
    /// shares this). Generated files are read at the reference's resolution with the
    /// request's quantize and channel; one that cannot be is left out with a warning.
    public static func measure(_ performances: [DrumPerformance], against reference: ReferenceSet,
                               request: StatsRequest) -> StatsRun {
        var settings = HitExtractionSettings()
        settings.channel = request.channel
        settings.quantize = request.quantize
        settings.parseMode = request.lenient ? .lenient : .safe
        var warnings: [String] = []
        var notes = reference.remarks.filter { !$0.contains("piano roll") }
        // Both sides at the reference's resolution (a dataset's PPQ, else 480).
        settings.ppq = reference.ticksPerQuarter
        if reference.ticksPerQuarter != 480 { notes.append("read at the reference dataset's \(reference.ticksPerQuarter) PPQ") }
        if reference.kind == "convert-midi dataset", reference.quantize != request.quantize {
            notes.append("the reference dataset was made with " + (reference.quantize.map { "--quantize \($0)" } ?? "no --quantize")
                         + ", the generated files were read with " + (request.quantize.map { "--quantize \($0)" } ?? "no --quantize")
                         + ": give the dataset's setting to compare like with like")
        }

        // Both sides' notes as a GM kit sounds them, unless asked for the raw notes.
        func audible(_ t: HitTrack) -> HitTrack {
            guard !request.rawNotes else { return t }
            var m = t
            m.notes = t.notes.map(GeneralMIDIDrums.compared(note:))
            return m
        }
        var generated = GrooveTally(ticksPerQuarter: reference.ticksPerQuarter)
        var measured: [String] = []
        for p in performances {
            do {
                generated.add(audible(try ReferenceSet.midiTrack(p, settings: settings)), tolerance: request.tolerance)
                measured.append(p.path)
            } catch {
                warnings.append("\(error)")
            }
        }
        var ref = GrooveTally(ticksPerQuarter: reference.ticksPerQuarter)
        for t in reference.tracks { ref.add(audible(t), tolerance: request.tolerance) }
        let result = StatsResult(generated: generated, reference: ref, tolerance: request.tolerance,
                                 quantize: request.quantize, expectedHits: request.expectedHits)
        return StatsRun(request: request, result: result, referenceKind: reference.kind, referenceSplit: reference.split,
                        measured: measured, warnings: warnings, notes: notes + result.notes)
    }

    // MARK: Output

    /// The settings line: "480 PPQ, --quantize 30, channel auto; on the grid: within 1/8 of a sixteenth (15 ticks)".
    var settingsLine: String {
        let r = result
        let ticks = r.tolerance * Double(r.ticksPerQuarter) / 4
        return "\(r.ticksPerQuarter) PPQ, " + (r.quantize.map { "--quantize \($0)" } ?? "not quantized")
            + ", channel \(request.channel)" + (request.rawNotes ? ", raw notes" : "") + "; on the 16th grid: within "
            + Self.fraction(r.tolerance)
            + " of a sixteenth (\(Self.number(ticks)) ticks) of a grid line"
    }

    /// The table, the accent profile and the notes, for a terminal.
    public func text() -> String {
        let r = result
        var out = "drummer stats: \(measured.count) generated file\(measured.count == 1 ? "" : "s") against \(request.reference) ("
            + referenceKind + (referenceSplit.map { ", \($0.rawValue) split" } ?? "") + ")\n"
        out += settingsLine + "\n\n"
        let header = StatsRow(figure: "figure", generated: "generated", reference: "reference", comparison: "comparison",
                              target: "target", mark: "")
        let rows = [header] + r.rows
        func width(_ f: (StatsRow) -> String) -> Int { rows.map { f($0).count }.max() ?? 0 }
        let w = [width(\.figure), width(\.generated), width(\.reference), width(\.comparison), width(\.target)]
        for row in rows {
            let cells = [row.figure, row.generated, row.reference, row.comparison, row.target]
            var line = ""
            for (i, c) in cells.enumerated() {
                // Numbers right-aligned, words left-aligned.
                let pad = String(repeating: " ", count: w[i] - c.count)
                line += (i == 1 || i == 2) && row != header ? pad + c : c + pad
                line += "  "
            }
            out += (line + row.mark).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) + "\n"
        }
        if let barTicks = r.accent.barTicks {
            out += "\naccent profile: mean velocity per sixteenth of a bar of \(barTicks) ticks ("
                + "\(r.accent.generated.count) sixteenths); hits in other bars left out: "
                + "\(StatsResult.grouped(r.accent.skippedGenerated)) generated, \(StatsResult.grouped(r.accent.skippedReference)) reference\n"
            let labels = r.accentLabels
            let cell = 4
            func line(_ name: String, _ values: [String]) -> String {
                name.padding(toLength: 10, withPad: " ", startingAt: 0)
                    + values.map { String(repeating: " ", count: max(0, cell - $0.count)) + $0 }.joined(separator: " ") + "\n"
            }
            out += line("", labels)
            out += line("generated", r.accent.generated.map { $0.map { String(Int($0.rounded())) } ?? "–" })
            out += line("reference", r.accent.reference.map { $0.map { String(Int($0.rounded())) } ?? "–" })
        }
        if !notes.isEmpty {
            out += "\nnotes:\n" + notes.map { "- \($0)\n" }.joined()
        }
        return out
    }

    /// The figures as JSON (stable snake_case keys; null for n/a, explained in "notes").
    public func json() throws -> Data {
        let r = result
        func num(_ v: Double?) -> JSONValue { v.map { $0.isFinite ? .double($0) : .null } ?? .null }
        func pair(_ p: StatsResult.Pair, extra: [String: JSONValue] = [:]) -> JSONValue {
            .object(["generated": num(p.generated), "reference": num(p.reference), "ratio": num(p.ratio)].merging(extra) { a, _ in a })
        }
        func counts(_ t: GrooveTally) -> JSONValue {
            .object(["files": .int(t.files), "hits": .int(t.hits), "bars": t.bars.map { .int($0) } ?? .null,
                     "hits_per_bar": num(t.hitsPerBar)])
        }
        var targets: [String: JSONValue] = [:]
        for t in r.targets { targets[t.key] = .object(["target": .string(t.text), "met": t.met.map { .bool($0) } ?? .null]) }
        let root: [String: JSONValue] = [
            "settings": .object([
                "ppq": .int(r.ticksPerQuarter), "quantize": r.quantize.map { .int($0) } ?? .null,
                "tolerance_sixteenths": .double(r.tolerance), "tolerance_ticks": .double(r.tolerance * Double(r.ticksPerQuarter) / 4),
                "channel": .string(request.channel.description), "lenient": .bool(request.lenient),
                "raw_notes": .bool(request.rawNotes),
            ]),
            "reference": .object(["path": .string(request.reference), "kind": .string(referenceKind),
                                  "split": referenceSplit.map { .string($0.rawValue) } ?? .null]),
            "generated": .object(["files": .array(measured.map { .string($0) })]),
            "counts": .object(["generated": counts(r.generated), "reference": counts(r.reference)]),
            "note_js_bits": num(r.noteJS),
            "delta_js_bits": num(r.deltaJS),
            "velocity_js_bits": num(r.velocityJS),
            "grid16_share": pair(r.gridShare, extra: ["uniform_random": .double(r.gridUniform)]),
            "bar_periodicity": pair(r.periodicity),
            "bar_periodicity_per_drum": pair(r.periodicityPerDrum),
            "accent_profile": .object([
                "bar_ticks": r.accent.barTicks.map { .int($0) } ?? .null,
                "labels": .array(r.accent.barTicks == nil ? [] : r.accentLabels.map { .string($0) }),
                "generated": .array(r.accent.generated.map(num)),
                "reference": .array(r.accent.reference.map(num)),
                "correlation": num(r.accent.correlation),
                "skipped_hits": .object(["generated": .int(r.accent.skippedGenerated), "reference": .int(r.accent.skippedReference)]),
            ]),
            "duplicate_onset_rate": .object(["generated": num(r.duplicateRate.generated), "reference": num(r.duplicateRate.reference)]),
            "bar_structure": structureJSON(num: num, pair: { pair($0) }),
            "expected_hits": r.expectedHits.map { .int($0) } ?? .null,
            "targets": .object(targets),
            "notes": .array(notes.map { .string($0) }),
            "warnings": .array(warnings.map { .string($0) }),
        ]
        return try JSONOutput.encode(JSONValue.object(root))
    }

    /// The "bar_structure" object: bar structure, phrasing, touch and figures per drum class,
    /// {"generated": …, "reference": …, "ratio": …} each.
    func structureJSON(num: (Double?) -> JSONValue, pair: (StatsResult.Pair) -> JSONValue) -> JSONValue {
        let g = result.generated.structure, r = result.reference.structure
        func p(_ f: (BarStructureSums) -> Double?) -> JSONValue { pair(StatsResult.Pair(generated: f(g), reference: f(r))) }
        var out: [String: JSONValue] = [
            "files_4_4": .object(["generated": .int(g.files44), "reference": .int(r.files44)]),
            "files_not_4_4": .object(["generated": .int(g.filesNot44), "reference": .int(r.filesNot44)]),
            "patterns_per_16_bars": p(\.patternsPer16Bars),
            "fill_hits_ratio": p(\.fillHitsRatio),
            "fill_tom_crash_ratio": p(\.fillClassRatio),
            "fill_similarity_ratio": p(\.fillSimilarityRatio),
            "hits_per_bar": pair(StatsResult.Pair(generated: result.generated.hitsPerBar, reference: result.reference.hitsPerBar)),
            "simultaneous_onset_share": p(\.simultaneousShare),
            "velocity_mean": p(\.velocityMean),
            "soft_hit_share": p(\.softShare),
            "hihat_velocity_spread": p(\.hatVelocitySpread),
            "loudness_drift": p(\.loudnessDrift),
        ]
        for lag in BarStructureSums.lags { out["bar_similarity_lag\(lag)"] = p { $0.similarity(lag: lag) } }
        /// {class name: pair} for a figure per drum class.
        func byClass(_ f: (BarStructureSums, Int) -> Double?) -> JSONValue {
            .object(Dictionary(uniqueKeysWithValues: (0..<DrumClasses.count).map { c in (DrumClasses.names[c], p { f($0, c) }) }))
        }
        out["grid16_share_by_class"] = byClass { $0.gridShare(drumClass: $1) }
        out["velocity_mean_by_class"] = byClass { $0.velocityMean(drumClass: $1) }
        out["hit_share_by_class"] = byClass { $0.hitShare(drumClass: $1) }
        out["class_mix_js_bits"] = result.classMixJS.map { .double($0) } ?? .null
        return .object(out)
    }

    /// "1/8", "1/4", else the decimal.
    static func fraction(_ v: Double) -> String {
        for d in [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 32] {
            let n = v * Double(d)
            if abs(n - n.rounded()) < 1e-9, n.rounded() >= 1 { return "\(Int(n.rounded()))/\(d)" }
        }
        return number(v)
    }

    static func number(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(format: "%g", v)
    }
}
