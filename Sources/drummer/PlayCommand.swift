// `drummer play`: a model as a live drummer on JACK MIDI (the Live module does the playing).
import ArgumentParser
import DrummerCore
import Foundation
import FileOutput
import Live
import ModelFiles
import Sample

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a model live on JACK MIDI, at --bpm or at JACK transport's tempo and bars.",
        discussion: """
            A JACK client with a MIDI output port (out) and input port (in); libjack is loaded only \
            here (Debian: libjack-jackd2-0, and jackd2 or PipeWire's JACK for a server). It plays \
            what `drummer sample MODEL --bars N --seed S --bpm B` writes for the same seed, style \
            and temperature, each note at its own frame; while JACK transport rolls it follows \
            transport's tempo and bar lines (starts, stops and tempo changes at the next bar line). \
            It draws one bar ahead of the clock. Ctrl-C, SIGTERM or SIGHUP ends it with every sounding \
            note off (exit status 128 + the signal); the server going away ends it with an error. \
            Hits on the input port (NOTE ONs on channel 10) are read on the 16th-note grid: \
            while they come, they go out instead of the model's own notes, and once they stop \
            (a beat past the next bar line) it carries on from the last two bars, as `drummer \
            sample --primer` of them would; with --answer K it listens K bars and answers K bars. \
            Other input is ignored and counted on the status line. \
            See docs/live.md.
            """)

    @Argument(help: ArgumentHelp("Model directory, the name of an installed one, a training checkpoint (.h5) or a checkpoint directory, as for `drummer sample`; groove is the shipped model.",
                                 valueName: "model"))
    var model: String = ModelLocator.defaultModel

    @Option(parsing: .unconditional, help: "Tempo in quarter notes per minute (4 to 1000) while JACK transport is not rolling.")
    var bpm: Double = 120

    @Option(parsing: .unconditional, help: "Bars to play, then stop (default: until Ctrl-C, SIGTERM or SIGHUP).")
    var bars: Int?

    @Option(parsing: .unconditional, help: "Listen this many bars (1 to 64), answer as many bars carrying on from what it heard, listen again (a grid model).")
    var answer: Int?

    @Option(parsing: .unconditional, help: "Random seed, as `drummer sample --seed` (default: a random one, printed).")
    var seed: UInt64?

    @Option(parsing: .unconditional, help: "Temperature (below 1 plainer and steadier, above 1 busier and looser), as `drummer sample --temperature` (default: the temperatures model.json carries, else 1; the hits 0.8 where it carries on from hits it heard, as sample after a --primer).")
    var temperature: String?

    @Option(help: "The style to play, as `drummer sample --style` (a model with a style input).")
    var style: String?

    @Option(help: "Connect the output port to this JACK MIDI input port (repeatable), e.g. fluidsynth-midi:midi_00 (FluidSynth 2's).")
    var connect: [String] = []

    @Option(help: "Connect this JACK MIDI output port to the input port (repeatable), e.g. a drum kit's.")
    var listen: [String] = []

    @Option(help: "The JACK server to use (default: $JACK_DEFAULT_SERVER, else the default server).")
    var server: String?

    func validate() throws {
        guard !model.isEmpty else { throw ValidationError("MODEL must not be empty") }
        guard bpm.isFinite, bpm >= 4, bpm <= 1000 else { throw ValidationError("--bpm must be between 4 and 1000, got \(bpm)") }
        if let b = bars, !(1...100_000).contains(b) { throw ValidationError("--bars must be between 1 and 100000, got \(b)") }
        if let k = answer, !(1...64).contains(k) { throw ValidationError("--answer must be between 1 and 64 bars, got \(k)") }
        if let t = temperature { _ = try SampleCommand.setting(t) }
        if let s = server, s.isEmpty { throw ValidationError("--server must name a JACK server") }
        for p in connect + listen where p.isEmpty { throw ValidationError("--connect and --listen must name a JACK port") }
    }

    func run() throws {
        // These GEMVs are small: one BLAS thread is several times faster than two (bench sample).
        BLASRuntime.setThreads(1)
        let say: (String) -> Void = { Console.write(Data(($0 + "\n").utf8)) }
        let loaded = try ModelSource.load(try ModelLocator.resolve(model), step: nil)
        if loaded.origin != model { say("model: \(loaded.origin)") }
        if answer != nil, loaded.groups.grid == nil { throw LiveError.answerNeedsGrid }
        let sampler = try Sampler(weights: loaded.weights, groups: loaded.groups)
        var settings = LiveSettings()
        for continuing in [false, true] {
            let (_, temperatures) = try SampleCommand.temperatures(temperature, for: loaded.groups, defaults: loaded.sampling.temperatures,
                                                                   continuing: continuing)
            var options = SamplingOptions(temperature: 1)
            options.set(temperatures)
            if continuing { settings.continuationOptions = options } else { settings.options = options }
        }
        settings.givenStyles = try style.map { try SampleCommand.style($0, in: loaded.groups, model: model) }
        settings.fixedStyle = settings.givenStyles.flatMap { $0.count == 1 ? $0[0] : nil }
        settings.seed = seed ?? UInt64.random(in: 0...UInt64(UInt32.max))
        settings.bpm = bpm
        settings.bars = bars
        settings.answerBars = answer
        settings.server = server
        settings.connect = connect
        settings.listen = listen
        switch try LivePlayer(sampler: sampler, settings: settings, status: say).run() {
        case .played: return
        case .interrupted(let signal): throw ExitCode(128 + signal)
        }
    }
}
