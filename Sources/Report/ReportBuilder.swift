// `drummer report`: gathers what the inputs allow into sections of one HTML page.
// Each section appears when its input is given; an input that cannot be read becomes a
// warning (one line naming the file) and a note in its section, and the rest is drawn.
import DrummerCore
import Foundation
import MIDIParse
import Plot
import ModelFiles

public struct ReportOptions: Sendable {
    /// A checkpoint directory holding train_log.csv.
    public var checkpoints: String?
    /// A model directory holding model.json.
    public var model: String?
    /// A convert-midi dataset, a folder of MIDI files or one MIDI file.
    public var reference: String?
    /// Generated (or any) drum MIDI files.
    public var generated: [String] = []
    /// Bars drawn per piano roll and played per audio clip.
    public var bars = 8
    /// Most points drawn per curve.
    public var maxPoints = 500
    /// Render audio through FluidSynth.
    public var audio = true
    public var soundfont: String?
    /// Onsets of MIDI files snapped to this grid for the `drummer stats` figures and the
    /// reference (as `drummer stats --quantize`); a dataset reference's own when nil.
    public var quantize: Int?
    /// Longest audio clip.
    var audioSeconds = 30.0
    /// Most generated files given an audio clip (each adds about 44 kB per second).
    var maxAudioFiles = 8
    public var title = "drummer report"

    public init() {}
}

public struct ReportResult {
    public var html: String
    /// One line per problem, each naming the file.
    public var warnings: [String]
    /// Section ids on the page, in order.
    public var sections: [String]
    /// The ids of the sections that hold a chart, table or clip (the others only say what
    /// could not be drawn), in order.
    public var drawnSections: [String]
    /// False when no section holds a chart, table or clip: the page would only say what failed.
    public var drewSomething: Bool
}

/// One section of the page.
struct Section {
    var id: String
    var title: String
    var nodes: [Node<HTML.BodyContext>] = []
    var drawn = false

    init(id: String, title: String) {
        self.id = id
        self.title = title
    }

    mutating func note(_ text: String) { nodes.append(.p(.class("note"), .text(text))) }
}

public enum ReportBuilder {
    public static func build(_ options: ReportOptions, progress: ((String) -> Void)? = nil) -> ReportResult {
        var warnings: [String] = []
        var sections: [Section] = []

        // Inputs read once, shared by the sections.
        var generated: [DrumPerformance] = []
        var generatedProblems: [String: String] = [:]
        for path in options.generated {
            do {
                let p = try DrumPerformance.load(path: path, mode: .lenient)
                for w in p.warnings { warnings.append("\(w)") }
                if p.hits.isEmpty {
                    let e = ReportError.noDrums(path: path)
                    warnings.append(e.description)
                    generatedProblems[path] = e.description
                } else {
                    generated.append(p)
                }
            } catch {
                let message = FileManager.default.fileExists(atPath: path)
                    ? "\(error)" : ReportError.missingPath(path: path, what: "MIDI file").description
                warnings.append(message)
                generatedProblems[path] = message
            }
        }
        // The grid MIDI onsets are snapped to: --quantize, else the grid a grid model plays on
        // (the spacing of its offset bins), as `drummer stats --quantize` would be run for it.
        let modelGrid = options.quantize == nil ? options.model.flatMap(Self.modelGrid(directory:)) : nil
        let quantize = options.quantize ?? modelGrid
        var reference: ReferenceSet?
        var referenceProblem: String?
        if let r = options.reference {
            progress?("reading the reference \(r)")
            do {
                var settings = ReferenceSet.defaultSettings
                settings.quantize = quantize
                reference = try ReferenceSet.load(path: r, settings: settings)
                warnings += reference?.readingWarnings ?? []
            } catch {
                referenceProblem = "\(error)"
                warnings.append("\(error)")
            }
        }

        if let dir = options.checkpoints {
            sections.append(curves(dir, maxPoints: options.maxPoints, warnings: &warnings))
        }
        if !options.generated.isEmpty || reference?.heldOut != nil {
            var s = Section(id: "piano-rolls", title: "Piano rolls")
            s.note("The first \(options.bars) bars of each file; one mark per hit, darker for louder hits; "
                   + "dark lines are bar lines, light ones beats.")
            var figures: [Node<HTML.BodyContext>] = []
            for path in options.generated {
                if let problem = generatedProblems[path] {
                    figures.append(.element(named: "figure", nodes: [
                        .element(named: "figcaption", nodes: [.text(path)]), .p(.class("note"), .text(problem))]))
                } else if let p = generated.first(where: { $0.path == path }) {
                    figures.append(rollFigure(p, caption: path, bars: options.bars))
                    s.drawn = true
                }
            }
            if let held = reference?.heldOut {
                figures.append(rollFigure(held, caption: "reference: \(held.path)", bars: options.bars, reference: true))
                s.drawn = true
            } else if options.reference != nil {
                s.note("No reference file to draw" + (referenceProblem.map { ": \($0)" } ?? "."))
            }
            s.nodes.append(.div(.class("figures"), .group(figures)))
            sections.append(s)
        }
        if !options.generated.isEmpty || options.reference != nil {
            var h = histograms(generated: generated, sets: Self.generatedSets(options.generated), reference: reference,
                               referenceProblem: referenceProblem, quantize: quantize)
            if let modelGrid, options.reference != nil {
                h.nodes.insert(.p(.class("small"), .text("MIDI onsets snapped to a grid of \(modelGrid) ticks, the grid "
                                                         + "\(options.model ?? "the model") plays on (--quantize sets another).")), at: 0)
            }
            sections.append(h)
        }
        if let dir = options.model {
            sections.append(modelCard(dir, warnings: &warnings))
        }
        if !options.generated.isEmpty {
            sections.append(audio(generated, options: options, warnings: &warnings, progress: progress))
        }

        let html = ReportPage.render(title: options.title, options: options, sections: sections, warnings: warnings)
        return ReportResult(html: html, warnings: warnings, sections: sections.map(\.id),
                            drawnSections: sections.filter(\.drawn).map(\.id), drewSomething: sections.contains { $0.drawn })
    }

    // MARK: Training curves

    static func curves(_ dir: String, maxPoints: Int, warnings: inout [String]) -> Section {
        var s = Section(id: "curves", title: "Training curves")
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            let e = ReportError.missingPath(path: dir, what: "checkpoint directory")
            warnings.append(e.description)
            s.note(e.description)
            return s
        }
        let path = (dir as NSString).appendingPathComponent(TrainingLog.fileName)
        guard FileManager.default.fileExists(atPath: path) else {
            let e = ReportError.noTrainLog(directory: dir)
            warnings.append(e.description)
            s.note(e.description)
            return s
        }
        let log: TrainingLog
        do { log = try TrainingLog.load(path: path) } catch {
            warnings.append("\(error)")
            s.note("\(error)")
            return s
        }
        guard log.rowCount > 0 else {
            let e = ReportError.emptyLog(path: path)
            warnings.append(e.description)
            s.note(e.description)
            return s
        }
        if log.skippedRows > 0 {
            warnings.append("\(path): \(log.skippedRows) row(s) without a numeric step were left out")
        }
        // Rows whose figures are all empty or not finite (nan, inf) draw nothing: said, naming the log.
        guard !(log.lossColumns.isEmpty && log.accuracyColumns.isEmpty && log.learningRateColumns.isEmpty) else {
            let m = "\(path): none of its \(log.rowCount) row(s) has a finite loss, accuracy or learning rate to draw"
            warnings.append(m)
            s.note(m)
            return s
        }
        // A run that diverged logs nan losses while its rate runs on: its loss curves stop where
        // they turned nan, which the charts alone would show as a healthy run cut short.
        if let bad = log.nonFiniteLoss {
            let m: String
            if bad.toTheEnd {
                let lastFinite = log.lossColumns.compactMap { log.series($0).last?.x }.max()
                m = "\(path): the losses are not finite (nan or inf) from step \(Int(bad.step)) on, \(bad.rows) row(s): the run diverged; "
                    + (lastFinite.map { "the loss curves stop at step \(Int($0))" } ?? "no loss curve to draw")
            } else {
                m = "\(path): \(bad.rows) row(s) hold a loss that is not finite (nan or inf), the first at step \(Int(bad.step)); "
                    + "the loss curves leave them out"
            }
            warnings.append(m)
            s.note(m)
        }
        let best = log.bestValidation
        let logged = log.rowCount - log.evaluationCount
        var lines: [String] = ["\(log.evaluationCount) evaluation(s)"
                               + (logged > 0 ? " and the running loss at \(logged) more logged step(s)" : "")
                               + ", steps \(NiceScale.label(log.steps.first ?? 0)) to "
                               + "\(NiceScale.label(log.steps.last ?? 0)) (\(path))."]
        if let best {
            var b = "Best validation loss \(String(format: "%.4f", best.loss)) at step \(Int(best.step))"
            if let acc = log.values["validation_accuracy"]?[best.row] { b += ", validation accuracy \(String(format: "%.4f", acc))" }
            lines.append(b + ".")
        } else {
            lines.append("No validation loss in the log: no best step to mark.")
        }
        s.nodes.append(.p(.text(lines.joined(separator: " "))))

        // A column identical to an earlier one of its chart (a grid run logs train_loss and
        // train_loss_all alike) is drawn once, named "train_loss = train_loss_all" in the legend:
        // drawn twice, the later line lay exactly over the earlier.
        func distinct(_ columns: [String]) -> [(column: String, name: String)] {
            var kept: [(column: String, names: [String])] = []
            for c in columns {
                if let i = kept.firstIndex(where: { log.values[$0.column] == log.values[c] }) {
                    kept[i].names.append(c)
                } else {
                    kept.append((c, [c]))
                }
            }
            return kept.map { ($0.column, $0.names.joined(separator: " = ")) }
        }
        func series(_ columns: [(column: String, name: String)]) -> [LineChart.Series] {
            columns.map { c in
                var rows: [(row: Int, x: Double, y: Double)] = []
                for (i, v) in (log.values[c.column] ?? []).enumerated() { if let v { rows.append((i, log.steps[i], v)) } }
                let keep = Set(rows.indices.filter { rows[$0].row == best?.row })
                let idx = Downsample.indices(rows.map(\.y), maxPoints: maxPoints, keep: keep)
                return LineChart.Series(name: c.name, points: idx.map { (rows[$0].x, rows[$0].y) },
                                        dashed: c.column.hasPrefix("smoothed"))
            }
        }
        var figures: [Node<HTML.BodyContext>] = []
        let marker = best.map { LineChart.Marker(x: $0.step, y: nil, label: "best validation: step \(Int($0.step))") }
        let charts: [(String, [String], String)] = [
            ("Loss (nats per event)", log.lossColumns, "loss"),
            ("Accuracy", log.accuracyColumns, "accuracy"),
            ("Learning rate", log.learningRateColumns, "learning rate"),
        ]
        for (title, columns, yLabel) in charts where !columns.isEmpty {
            let drawn = distinct(columns)
            var chart = LineChart(series: series(drawn), xLabel: "step", yLabel: yLabel, marker: marker)
            if yLabel == "loss", let best { chart.marker?.y = best.loss }
            let caption = drawn.count < columns.count ? title + "; columns with the same values are drawn once, named together" : title
            figures.append(figure(chart.render(label: title), caption: caption, legend: drawn.map(\.name)))
        }
        s.nodes.append(.div(.class("figures"), .group(figures)))
        s.drawn = !figures.isEmpty

        let checkpoints = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
            .filter { $0.hasSuffix(".h5") }
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
        if !checkpoints.isEmpty {
            let listed = checkpoints.map { name -> String in
                let size = (try? FileManager.default.attributesOfItem(atPath: (dir as NSString).appendingPathComponent(name)))?[.size] as? NSNumber
                return name + (size.map { " (\(ModelCard.bytes($0.intValue)))" } ?? "")
            }
            s.nodes.append(.p(.class("small"), .text("Checkpoints kept: " + listed.joined(separator: ", "))))
        }
        return s
    }

    // MARK: Piano rolls

    static func rollFigure(_ p: DrumPerformance, caption: String, bars: Int, reference: Bool = false) -> Node<HTML.BodyContext> {
        let roll = PianoRoll(p, bars: bars)
        let drawn = roll.render(label: "Piano roll of \(p.path)")
        let meters = Set(p.meter.segments.map { "\($0.numerator)/\($0.denominator)" }).sorted().joined(separator: ", ")
        var text = "\(caption): bars 1–\(roll.bars) of \(p.barCount), \(drawn.marks) hits drawn, \(meters), "
            + "\(Int(p.initialBPM.rounded())) BPM, \(p.channelDescription)"
        if drawn.omitted > 0 { text += "; \(drawn.omitted) more hits in these bars not drawn" }
        return .element(named: "figure", nodes: [
            .class(reference ? "roll reference" : "roll"),
            .raw(drawn.svg),
            .element(named: "figcaption", nodes: [.text(text)]),
        ])
    }

    // MARK: Histograms

    /// The generated files in sets, one column each, in the order given: the files NAME-k.mid of
    /// one folder (as `sample --count` names them; two or more) are the set NAME; any other file
    /// is a set of its own, named by its file name. A name two folders share gets its folder.
    static func generatedSets(_ paths: [String]) -> [(name: String, paths: [String])] {
        var sets: [(folder: String, name: String, paths: [String])] = []
        for (path, k) in zip(paths, setKeys(paths)) {
            if let i = sets.firstIndex(where: { $0.folder == k.folder && $0.name == k.name }) {
                sets[i].paths.append(path)
            } else {
                sets.append((k.folder, k.name, [path]))
            }
        }
        let named = sets.map { set -> (name: String, paths: [String]) in
            let shared = sets.filter { $0.name == set.name }.count > 1
            let name = shared ? (set.folder.isEmpty ? set.name : "\(set.folder)/\(set.name)") : set.name
            return (name + (set.paths.count > 1 ? " (\(set.paths.count) files)" : ""), set.paths)
        }
        // Each set is a colour, a column and a stats table: 300 files of other names made 300 of
        // them, colours repeating. Beyond the colours the reference leaves, the files in no
        // NAME-N set are one set; beyond that too, the NAME-N sets after the first ones join it.
        let most = maxGeneratedSets
        guard named.count > most else { return named }
        var kept = named.filter { $0.paths.count > 1 }
        if kept.count + (kept.count < named.count ? 1 : 0) > most { kept = Array(kept.prefix(most - 1)) }
        let inKept = Set(kept.flatMap(\.paths))
        let pooled = paths.filter { !inKept.contains($0) }
        return kept + [((kept.isEmpty ? "\(pooled.count) files" : "\(pooled.count) other files"), pooled)]
    }

    /// Most sets of generated files: the palette's colours less the reference's.
    static var maxGeneratedSets: Int { Palette.colors.count - 1 }

    /// The set of each of `paths`: its folder, and NAME of NAME-k.mid (k its number) when another
    /// file of its folder is NAME-j.mid, else its stem. A lone file's -k is part of its name (a
    /// Groove file ends in its meter, 136_funk-fast_125_fill_4-4.mid), not a sample's number.
    static func setKeys(_ paths: [String]) -> [(folder: String, name: String, number: Int?)] {
        let keys = paths.map(setKey)
        var numbered: [String: Int] = [:]
        for k in keys where k.number != nil { numbered[k.folder + "\u{0}" + k.name, default: 0] += 1 }
        return zip(paths, keys).map { path, k in
            guard k.number != nil, numbered[k.folder + "\u{0}" + k.name, default: 0] < 2 else { return k }
            return (k.folder, ((path as NSString).lastPathComponent as NSString).deletingPathExtension, nil)
        }
    }

    /// A generated file's set by its own name: its folder, and NAME of NAME-k.mid (k its number)
    /// or its stem.
    static func setKey(_ path: String) -> (folder: String, name: String, number: Int?) {
        let folder = (path as NSString).deletingLastPathComponent
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        if let dash = stem.lastIndex(of: "-"), stem.index(after: dash) < stem.endIndex,
           stem[stem.index(after: dash)...].allSatisfy({ $0.isASCII && $0.isNumber }),
           dash > stem.startIndex {
            return (folder, String(stem[..<dash]), Int(stem[stem.index(after: dash)...]))
        }
        return (folder, stem, nil)
    }

    /// `paths` in the order the page shows them: each set where its first file is given, its
    /// files NAME-1, NAME-2 … NAME-10 by number (a shell's g-*.mid gives g-1, g-10, g-11 … g-2).
    public static func ordered(_ paths: [String]) -> [String] {
        var firstSeen: [String: Int] = [:]
        let keys = setKeys(paths)
        let keyed = paths.enumerated().map { i, path -> (set: Int, number: Int, index: Int, path: String) in
            let k = keys[i]
            let id = k.folder + "\u{0}" + k.name
            let set = firstSeen[id] ?? i
            firstSeen[id] = set
            return (set, k.number ?? Int.max, i, path)
        }
        return keyed.sorted { ($0.set, $0.number, $0.index) < ($1.set, $1.number, $1.index) }.map(\.path)
    }

    static func histograms(generated: [DrumPerformance], sets: [(name: String, paths: [String])]? = nil,
                           reference: ReferenceSet?, referenceProblem: String?, quantize: Int? = nil) -> Section {
        var s = Section(id: "histograms", title: "Generated against reference")
        // One source per set of generated files (one set of them all when not given).
        let groups: [(name: String, performances: [DrumPerformance])] = (sets ?? [("generated", generated.map(\.path))]).compactMap { set in
            let members = generated.filter { set.paths.contains($0.path) }
            return members.isEmpty ? nil : (set.name, members)
        }
        // Read as the reference is: on the grid `quantize` gives, when one does.
        var settings = ReferenceSet.defaultSettings
        settings.quantize = quantize
        let generatedSources: [(String, HitSample)] = groups.map { g in
            var sample = HitSample()
            for p in g.performances {
                if quantize != nil, let track = try? HitTrack(file: p.file, path: p.path, settings: settings) {
                    sample.append(track: track)
                } else {
                    sample.append(p)
                }
            }
            return (g.name, sample)
        }
        // Notes as a General MIDI kit sounds them (22 as 42, 26 as 46 …), as the stats table
        // below reads them: a corpus's hi-hat edges are the hi-hats a generated file plays.
        let sources: [(String, HitSample)] = (generatedSources + (reference.map { [("reference", $0.sample)] } ?? [])).map {
            var sample = $0.1
            sample.notes = sample.notes.map(GeneralMIDIDrums.compared(note:))
            return ($0.0, sample)
        }
        guard !sources.isEmpty else {
            s.note("Nothing to count: " + (referenceProblem ?? "no generated file could be read."))
            return s
        }
        if let r = reference {
            s.nodes.append(.p(.text("Reference: \(r.path) (\(r.kind), \(r.sample.hits) hits). "
                                    + "Bars show each source's share of its hits.")))
            for remark in r.remarks { s.note("Reference: \(remark).") }
        } else if let referenceProblem {
            s.note("No reference: \(referenceProblem)")
        } else {
            s.note("No reference given (--reference): generated files only.")
        }
        var figures: [Node<HTML.BodyContext>] = []
        var distances: [(String, Double)] = []
        // The sources `histogram` gives one for (a source without velocities has none). The
        // caption gives the total variation distance of the pair when there are two, else each
        // generated set's to the reference (none between generated sets without one).
        func chart(_ title: String, xLabel: String, tooltips: [String]? = nil, _ histogram: (HitSample) -> Histogram?) {
            let drawn = sources.enumerated().compactMap { i, src in
                histogram(src.1).map { (name: src.0, histogram: $0, isReference: reference != nil && i == sources.count - 1) }
            }
            guard let first = drawn.first else { return }
            let c = BarChart(categories: first.histogram.labels, tooltips: tooltips,
                             groups: drawn.map { BarChart.Group(name: $0.name, values: $0.histogram.fractions) },
                             xLabel: xLabel, yLabel: "share of hits")
            var caption = title
            if drawn.count == 2, let tv = Histogram.totalVariation(drawn[0].histogram, drawn[1].histogram) {
                caption += String(format: " (total variation distance %.3f)", tv)
                distances.append((title, tv))
            } else if let ref = drawn.last, ref.isReference {
                let each = drawn.dropLast().compactMap { g in
                    Histogram.totalVariation(g.histogram, ref.histogram).map { (g.name, $0) }
                }
                if !each.isEmpty {
                    caption += " (total variation distance to the reference: "
                        + each.map { "\($0.0) " + String(format: "%.3f", $0.1) }.joined(separator: ", ") + ")"
                    distances += each
                }
            }
            figures.append(figure(c.render(label: title), caption: caption, legend: drawn.map(\.name)))
        }
        let order = GeneralMIDIDrums.sorted(notes: sources.flatMap(\.1.notes))
        chart("Notes, read as a General MIDI kit sounds them (22 as 42, 26 as 46 …)", xLabel: "drum", tooltips: order.map { "\(GeneralMIDIDrums.name(note: $0)) (\($0))" }) {
            HitHistograms.notes($0.notes, order: order)
        }
        chart("Deltas (time since the previous hit, fraction of a whole note)", xLabel: "delta (whole notes)") {
            HitHistograms.deltas($0.deltas)
        }
        chart("Velocities", xLabel: "velocity") { $0.velocities.map(HitHistograms.velocities) }
        let bins = max(16, (sources.compactMap(\.1.positions).flatMap { $0 }.max() ?? -1) + 1)
        chart("Position in bar (nearest sixteenth)", xLabel: "position in bar") {
            $0.positions.map { HitHistograms.positions($0, minimumBins: bins) }
        }
        s.nodes.append(.div(.class("figures"), .group(figures)))

        // Figures per source.
        func row(_ name: String, _ value: (HitSample) -> String) -> Node<HTML.TableContext> {
            .tr(.th(.text(name)), .group(sources.map { .td(.text(value($0.1))) }))
        }
        let table: Node<HTML.BodyContext> = .table(
            .class("figures-table"),
            .tr(.th(.text("")), .group(sources.map { .th(.span(.class("name"), .text($0.0))) })),
            row("files") { String($0.files) },
            row("hits") { String($0.hits) },
            row("distinct notes") { String(Set($0.notes).count) },
            row("hits per bar") { x in x.bars.flatMap { $0 > 0 ? String(format: "%.1f", Double(x.hits) / Double($0)) : nil } ?? "–" },
            row("mean velocity") { x in
                x.velocities.flatMap { $0.isEmpty ? nil : String(format: "%.1f", Double($0.reduce(0, +)) / Double($0.count)) } ?? "–"
            },
            row("simultaneous hits (delta 0)") { x in
                x.deltas.isEmpty ? "–" : String(format: "%.1f%%", 100 * Double(x.deltas.filter { $0 == 0 }.count) / Double(x.deltas.count))
            }
        )
        s.nodes.append(.h3(.text("Figures")))
        s.nodes.append(table)
        if !distances.isEmpty {
            s.note("Total variation distance: half the summed absolute difference of the two shares, "
                   + "0 for identical distributions, 1 for disjoint ones.")
        }
        if let r = reference {
            for g in groups {
                s.nodes.append(contentsOf: statsTable(g.performances, reference: r, quantize: quantize,
                                                      title: groups.count > 1 ? g.name : nil))
            }
        }
        s.drawn = !figures.isEmpty
        return s
    }

    /// The `drummer stats` figures (same library code, its default settings: grid tolerance
    /// 1/8 of a sixteenth, a dataset's training split; generated files quantized as a
    /// dataset reference was, not quantized against MIDI files).
    static func statsTable(_ generated: [DrumPerformance], reference: ReferenceSet, quantize: Int?,
                           title: String? = nil) -> [Node<HTML.BodyContext>] {
        var request = StatsRequest(generated: generated.map(\.path), reference: reference.path)
        request.lenient = true
        // --quantize, else a dataset's (its onsets were snapped by convert-midi): the generated
        // files are read the same way, as `drummer stats --quantize` reads them.
        request.quantize = quantize ?? (reference.split != nil ? reference.quantize : nil)
        let run = StatsRun.measure(generated, against: reference, request: request)
        guard !run.measured.isEmpty else { return [] }
        let r = run.result
        var nodes: [Node<HTML.BodyContext>] = [
            .h3(.text("drummer stats" + (title.map { ": \($0)" } ?? ""))),
            .p(.class("small"), .text("The figures of "), .code(.text("drummer stats")),
               .text(" for these files against the reference: " + run.settingsLine + ".")),
            .table(
                .class("figures-table stats"),
                .tr(.th(.text("figure")), .th(.span(.class("name"), .text(title ?? "generated"))), .th(.text("reference")), .th(.text("comparison")),
                    .th(.text("target")), .th(.text(""))),
                .group(r.rows.map { row in
                    .tr(.th(.text(row.figure.trimmingCharacters(in: .whitespaces))), .td(.text(row.generated)), .td(.text(row.reference)),
                        .td(.text(row.comparison)), .td(.text(row.target)), .td(.text(row.mark)))
                })
            ),
        ]
        if r.accent.barTicks != nil {
            func cells(_ values: [Double?]) -> [Node<HTML.TableRowContext>] {
                values.map { .td(.text($0.map { String(Int($0.rounded())) } ?? "–")) }
            }
            nodes.append(.p(.class("small"), .text("Accent profile: mean velocity per sixteenth of the bar.")))
            nodes.append(.table(
                .class("figures-table accent"),
                .tr(.th(.text("")), .group(r.accentLabels.map { .th(.text($0)) })),
                .tr(.th(.span(.class("name"), .text(title ?? "generated"))), .group(cells(r.accent.generated))),
                .tr(.th(.text("reference")), .group(cells(r.accent.reference)))
            ))
        }
        for line in run.notes { nodes.append(.p(.class("note"), .text("Stats: \(line)."))) }
        return nodes
    }

    /// The grid a grid model plays on, in ticks: the spacing of its offset bins (model.json
    /// groups.grid.offsets, evenly spaced: -60, -30, 0, 30 → 30); nil for another model or a
    /// model.json that cannot be read (the model card says why).
    static func modelGrid(directory: String) -> Int? {
        let path = (directory as NSString).appendingPathComponent(ModelDirectory.manifestFile)
        guard let data = FileManager.default.contents(atPath: path),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let grid = (json["groups"] as? [String: Any])?["grid"] as? [String: Any],
              let offsets = (grid["offsets"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.intValue }),
              offsets.count >= 2 else { return nil }
        let step = offsets[1] - offsets[0]
        guard step > 0, zip(offsets, offsets.dropFirst()).allSatisfy({ $1 - $0 == step }) else { return nil }
        return step
    }

    // MARK: Model card

    static func modelCard(_ dir: String, warnings: inout [String]) -> Section {
        var s = Section(id: "model", title: "Model card")
        let card: ModelCard
        do { card = try ModelCard.load(directory: dir) } catch {
            warnings.append("\(error)")
            s.note("\(error)")
            return s
        }
        func table(_ rows: [(String, String)]) -> Node<HTML.BodyContext> {
            .table(.class("kv"), .group(rows.map { .tr(.th(.text($0.0)), .td(.text($0.1))) }))
        }
        s.nodes.append(.p(.text("From \(dir)/\(ModelDirectory.manifestFile).")))
        // A model that does not load (a weight file cut short or missing, a checksum that fails)
        // is named as any input of the report that cannot be read: on stderr and here.
        if let problem = card.problem {
            warnings.append(problem)
            s.note("The model does not load: \(problem)")
        }
        s.nodes.append(table(card.summary))
        s.nodes.append(.h3(.text(card.isGrid ? "The dataset's vocabulary" : "Vocabulary")))
        s.nodes.append(.p(.text(card.isGrid ? "The notes and tick values of the dataset it was trained on (its identity: the grid's "
                                + "groups read drum classes, velocity bins and offsets instead). Notes, by index:" : "Notes, by index:")))
        s.nodes.append(.div(.class("vocab"), .group(card.notes.enumerated().map { i, n in
            .span(.b(.text("\(i)")), .text(" \(n) \(GeneralMIDIDrums.name(note: n))"))
        })))
        if !card.ticks.isEmpty {
            s.nodes.append(.p(.class("small"), .text("Tick values, by index: " + card.ticks.map(String.init).joined(separator: ", "))))
        }
        if !card.groups.isEmpty {
            s.nodes.append(.h3(.text("Groups")))
            for (i, g) in card.groups.enumerated() {
                s.nodes.append(.h3(.class("sub"), .text("group \(i + 1)")))
                s.nodes.append(table(g))
            }
        }
        if !card.metadata.isEmpty {
            s.nodes.append(.h3(.text("Training and data (metadata)")))
            s.nodes.append(table(card.metadata))
        }
        if !card.other.isEmpty {
            s.nodes.append(.h3(.text("Other keys")))
            s.nodes.append(table(card.other))
        }
        s.drawn = true
        return s
    }

    // MARK: Audio

    static func audio(_ generated: [DrumPerformance], options: ReportOptions, warnings: inout [String],
                      progress: ((String) -> Void)?) -> Section {
        var s = Section(id: "audio", title: "Listen")
        guard options.audio else {
            s.note("Audio was not rendered (--no-audio).")
            return s
        }
        guard !generated.isEmpty else {
            s.note("No generated file could be read: nothing to play.")
            return s
        }
        s.note("The first \(options.bars) bars of each file (at most \(Int(options.audioSeconds)) s), "
               + "rendered by FluidSynth with a General MIDI soundfont, 22,050 Hz mono.")
        var items: [Node<HTML.BodyContext>] = []
        for p in generated.prefix(options.maxAudioFiles) {
            progress?("rendering audio for \(p.path)")
            let end = PianoRoll(p, bars: options.bars).endTick
            do {
                switch try AudioClip.render(p, endTick: end, maxSeconds: options.audioSeconds, soundfont: options.soundfont) {
                case .wav(let data, let seconds, let clipSeconds):
                    // The bars' length, and the clip's own: the last notes ring out past the bars.
                    let label = String(format: "%@ (%.1f s of bars; the clip %.1f s with the last notes ringing out, %@)",
                                       p.path, seconds, clipSeconds, ModelCard.bytes(data.count))
                    items.append(.div(.class("clip"),
                                      .p(.text(label)),
                                      .audio(.controls(true), .attribute(named: "preload", value: "none"),
                                             .source(.src("data:audio/wav;base64," + data.base64EncodedString()), .type(.wav)))))
                    s.drawn = true
                case .skipped(let reason):
                    let line = "audio skipped: \(reason)"
                    if !warnings.contains(line) { warnings.append(line) }
                    s.nodes.append(.p(.class("note skipped"), .text("Audio skipped: \(reason).")))
                    s.nodes.append(contentsOf: items)
                    return s
                }
            } catch {
                warnings.append("\(p.path): audio: \(error)")
                items.append(.p(.class("note"), .text("\(p.path): audio failed: \(error)")))
            }
        }
        if generated.count > options.maxAudioFiles {
            s.note("Audio for the first \(options.maxAudioFiles) of \(generated.count) files.")
        }
        s.nodes.append(contentsOf: items)
        return s
    }

    // MARK: Helpers

    /// A figure with an inline SVG, a caption and a colour legend.
    static func figure(_ svg: String, caption: String, legend: [String]) -> Node<HTML.BodyContext> {
        .element(named: "figure", nodes: [
            .raw(svg),
            .element(named: "figcaption", nodes: [
                .text(caption),
                .span(.class("legend"), .group(legend.enumerated().map { i, name in
                    .span(.class("key"), .span(.class("swatch"), .style("background:\(Palette.color(i))")), .text(name))
                })),
            ]),
        ])
    }
}
