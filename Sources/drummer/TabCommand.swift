// `drummer tab FILE.mid`: drum tablature in the terminal (or the grid as JSON).
import ArgumentParser
import DrummerCore
import FileOutput
import Foundation
import MIDIParse
import Report

struct TabCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tab",
        abstract: "Print a drum MIDI file as drum tablature.",
        discussion: """
            One line per drum, top to bottom: cymbals, hi-hats, toms (high to low), snares, bass \
            drums, other percussion, then notes outside General MIDI percussion (N22 ...). Names: \
            CR crash, CR2, SP splash, CH china, RD ride, RD2, RB ride bell, HH closed hi-hat, OH open \
            hi-hat, HF hi-hat foot, T1-T4 toms, FT/FT2 floor toms, SD snare, SD2 electric snare, SS \
            side stick, CP clap, BD bass drum (36), BD2 (35).

            Each cell is one --grid step (16 = sixteenth notes; a bar of n/d has n × grid / d cells: \
            16 in 4/4, 12 in 6/8). Glyphs: cymbals and hi-hats x, drums o; X / O accent (velocity \
            >= 110), g ghost (velocity < 50), - nothing. A ~ after a glyph marks a hit off the grid \
            (more than --tolerance of a cell from it), drawn at the nearest cell of its bar: triplets \
            are off a 16 grid, use --grid 12 or 24. A hit within --tolerance before a bar line is the \
            next bar's downbeat, played early. The count line reads 1 e & a (sixteenths), 1 & (eighths), \
            1 t l (triplets). Bars are separated by |, lines wrap at --width columns. A run of 16 or \
            more empty bars is one line saying how many.

            Reads channel 10 (index 9) when the file has notes there, otherwise every channel \
            (--channel to choose). The header lists the tempos as the meters (a range past four). --json prints \
            the grid: bpm (the first tempo), tempos (all), meters, bars, and per drum one array of cells per \
            bar (null, or velocity, hits, off_grid and offset in cells); a run of empty bars is one bar \
            with empty_bars and no cells.
            """)

    @Argument(help: ArgumentHelp("A drum MIDI file.", valueName: "file.mid"))
    var file: String

    @Option(parsing: .unconditional, help: "Bars to show (0: all).")
    var bars = 8

    @Option(parsing: .unconditional, help: "First bar to show (1-based).")
    var from = 1

    @Option(parsing: .unconditional, help: "Cells per whole note, 1 to 192: 16 sixteenths, 8 eighths, 12 eighth triplets, 24 sixteenth triplets, 32 thirty-seconds.")
    var grid = 16

    @Option(parsing: .unconditional, help: "Largest distance from a cell, as a fraction of a cell, at which a hit is on the grid (from 0 to below 0.5).")
    var tolerance = 0.25

    @Option(parsing: .unconditional, help: "Channel of the drums: auto (MIDI channel 10, index 9, if the file has notes there, else every channel), all, or a channel index 0-15 (MIDI channels 1-16 counted from 0: 9 is channel 10).")
    var channel = "auto"

    @Option(parsing: .unconditional, help: "Terminal width to wrap lines at, 20 columns or more.")
    var width = 80

    @Flag(help: "Read the file leniently: also recover defects that need guessing (an undecodable event, illegal status bytes), with a warning each. By default only what needs no guessing is recovered, as convert-midi does.")
    var lenient = false

    @Flag(help: "Print the grid as JSON instead of the tab.")
    var json = false

    func validate() throws {
        guard bars >= 0 else { throw ValidationError("--bars must be 0 (all) or more, got \(bars)") }
        guard from >= 1 else { throw ValidationError("--from is a bar number, 1 or more, got \(from)") }
        guard (1...192).contains(grid) else { throw ValidationError("--grid must be between 1 and 192 cells per whole note, got \(grid)") }
        guard tolerance >= 0, tolerance < 0.5 else { throw ValidationError("--tolerance must be at least 0 and below 0.5, got \(tolerance)") }
        _ = try StatsCommand.channel(channel)
        guard width >= 20 else { throw ValidationError("--width must be at least 20 columns, got \(width)") }
    }

    func run() throws {
        // Ctrl-C, SIGTERM and SIGHUP end the command at once, removing any output in progress.
        InterruptCleanup.install()
        let performance: DrumPerformance
        let selection = ChannelSelection(argument: channel) ?? .auto
        do {
            performance = try DrumPerformance.load(path: file, channel: selection,
                                                   mode: lenient ? .lenient : .safe)
        } catch let e as ReportError {
            stderr("error: \(FileManager.default.fileExists(atPath: file) ? e.description : "\(file): no such file")")
            throw ExitCode(1)
        }
        for w in performance.warnings { stderr("warning: \(w)") }
        if performance.hits.isEmpty {
            stderr("error: \(ReportError.noDrums(path: file, channels: selection.searched))")
            throw ExitCode(1)
        }
        let grid = DrumGrid(performance, options: DrumGridOptions(grid: grid, firstBar: from - 1,
                                                                   bars: bars == 0 ? nil : bars, tolerance: tolerance))
        guard from <= grid.totalBars else {
            stderr("error: \(file): --from \(from) is past its last bar (its hits span \(grid.totalBars) "
                + "bar\(grid.totalBars == 1 ? "" : "s"))")
            throw ExitCode(1)
        }
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            enc.keyEncodingStrategy = .convertToSnakeCase
            Console.write(try enc.encode(grid) + Data("\n".utf8))
        } else {
            print(DrumTab.render(grid, style: DrumTabStyle(width: width)), terminator: "")
        }
    }

    private func stderr(_ line: String) { Console.writeError(Data((line + "\n").utf8)) }
}
