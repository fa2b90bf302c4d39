// `drummer report`: one self-contained HTML page from a run's checkpoints, model,
// generated files and a reference.
import ArgumentParser
import DrummerCore
import Foundation
import ModelFiles
import Report
import FileOutput

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write one self-contained HTML page: training curves, piano rolls, histograms, model card, audio.",
        discussion: """
            Each section appears when its input is given: --checkpoints (train_log.csv: loss, \
            accuracy and learning rate against step, the best validation step marked), generated \
            MIDI files (piano rolls of the first --bars bars, audio of the first 8 files through FluidSynth), --reference \
            (a convert-midi dataset, a folder of MIDI files or one file: histograms of notes, \
            deltas, velocities and position in bar against the generated files, and a held-out \
            file's piano roll), --model (the model card from model.json). The page has no scripts \
            and fetches nothing: SVG, CSS and audio are inline, and it opens offline in any browser.

            An input that cannot be read is named on stderr and in the page, and the rest is drawn \
            (exit 0). Exit 1 when nothing at all could be drawn or the page cannot be written; 64 when given no input. \
            Audio needs fluidsynth and fluid-soundfont-gm; without them the page says so.
            """)

    @Option(help: ArgumentHelp("Checkpoint directory of `drummer train` (reads its train_log.csv).", valueName: "dir"))
    var checkpoints: String?

    @Option(help: ArgumentHelp("Model directory of `drummer export` (reads its model.json), or the name of an installed one (groove: see docs/install.md).", valueName: "dir"))
    var model: String?

    @Option(help: ArgumentHelp("A convert-midi dataset, a folder of MIDI files (5,000 of them at most, evenly spaced in path order) or a MIDI file to compare with.",
                               valueName: "data-or-midi-dir"))
    var reference: String?

    @Argument(help: ArgumentHelp("Generated (or any) drum MIDI files.", valueName: "generated.mid"))
    var generated: [String] = []

    @Option(name: [.customShort("o"), .customLong("output")], help: "Output HTML file (- for stdout).")
    var output = "report.html"

    @Option(parsing: .unconditional, help: "Bars drawn per piano roll and played per audio clip, 1 to 256.")
    var bars = 8

    @Option(name: .customLong("max-points"), parsing: .unconditional, help: "Most points drawn per training curve, 10 to 100,000 (longer logs are downsampled, keeping each stretch's minimum and maximum and the best step).")
    var maxPoints = 500

    @Flag(name: .customLong("no-audio"), help: "Do not render audio.")
    var noAudio = false

    @Option(help: "Soundfont for the audio (default: Debian's fluid-soundfont-gm).")
    var soundfont: String?

    @Option(parsing: .unconditional, help: "Snap MIDI onsets (generated files and a MIDI reference) to a grid of this many ticks for the drummer stats figures, as stats --quantize does (default: a dataset reference's own, else the grid a grid model given with --model plays on, else none).")
    var quantize: Int?

    @Option(help: "Page title.")
    var title = "drummer report"

    func validate() throws {
        guard checkpoints != nil || model != nil || reference != nil || !generated.isEmpty else {
            throw ValidationError("nothing to report: give --checkpoints, --model, --reference and/or generated MIDI files")
        }
        guard (1...256).contains(bars) else { throw ValidationError("--bars must be between 1 and 256, got \(bars)") }
        guard (10...100_000).contains(maxPoints) else { throw ValidationError("--max-points must be between 10 and 100000, got \(maxPoints)") }
        guard !output.isEmpty, !output.hasSuffix("/") else { throw ValidationError("-o must name a file (or - for stdout)") }
        if soundfont != nil, noAudio { throw ValidationError("--soundfont has no effect with --no-audio") }
        try StatsCommand.checkQuantize(quantize)
    }

    func run() throws {
        // Ctrl-C, SIGTERM and SIGHUP end the command at once, removing any output in progress.
        InterruptCleanup.install()
        // An installed model by its name, as sample finds it; one not found is the model card's
        // warning, as a missing directory is.
        let model = self.model.map { name in (try? ModelLocator.resolve(name)) ?? name }
        // The page must not replace what it is drawn from, checked before the (long) drawing.
        let inputs = generated.map { CommandInput($0, role: "the MIDI file") }
            + [.checkpointDirectory(checkpoints ?? ""),
               CommandInput(model ?? "", role: "the model directory"),
               CommandInput(reference ?? "", role: "the reference"),
               CommandInput(soundfont ?? "", role: "the soundfont")]
        do { try InputOverlap.check(output: output, inputs: inputs) } catch {
            stderr("error: \(error)")
            throw ExitCode(1)
        }
        var options = ReportOptions()
        options.checkpoints = checkpoints
        options.model = model
        options.reference = reference
        options.generated = ReportBuilder.ordered(generated)
        options.bars = bars
        options.maxPoints = maxPoints
        options.audio = !noAudio
        options.soundfont = soundfont
        options.title = title
        options.quantize = quantize
        let result = ReportBuilder.build(options) { stderr("report: \($0)") }
        for w in result.warnings { stderr("warning: \(w)") }
        guard result.drewSomething else {
            stderr("error: \(ReportError.nothingToDraw)")
            throw ExitCode(1)
        }
        let data = Data(result.html.utf8)
        // The output rules of every user-named file: `-` is standard output, a symlink is
        // followed, a device or FIFO is written through, a directory is refused.
        do { try AtomicOutput.write(data, to: output, options: .userFile) } catch {
            stderr("error: \(error)")
            throw ExitCode(1)
        }
        // The sections drawn, and those that only say what could not be.
        let notDrawn = result.sections.filter { !result.drawnSections.contains($0) }
        var line = "wrote \(output == "-" ? "the page to stdout" : output) (\(data.count / 1024) KiB): "
            + result.drawnSections.joined(separator: ", ") + (notDrawn.isEmpty ? "" : "; not drawn: " + notDrawn.joined(separator: ", "))
        if !result.warnings.isEmpty { line += "; \(result.warnings.count) warning(s)" }
        stderr(line)
    }

    private func stderr(_ line: String) { Console.writeError(Data((line + "\n").utf8)) }
}
