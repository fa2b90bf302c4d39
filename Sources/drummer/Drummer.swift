import ArgumentParser
import DrummerCore

struct Drummer: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "drummer",
            abstract: "From drum MIDI files to a deployable LSTM drummer.",
            discussion: """
                Pipeline: convert-midi DIR -> train -> export CKPT -> sample MODEL.
                """,
            version: """
                drummer \(DrummerVersion.string)
                OpenBLAS core: \(BLASRuntime.selectionDescription), \(BLASRuntime.threads) thread(s)
                """,
            subcommands: [ConvertMIDI.self, TrainCommand.self, EvalCommand.self, ExportCommand.self,
                          SampleCommand.self, HumanizeCommand.self, ReportCommand.self, TabCommand.self, StatsCommand.self, ChooseStepCommand.self, Bench.self])
    }
}
