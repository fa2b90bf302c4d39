import ArgumentParser
import DrummerCore

struct Drummer: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "drummer",
            abstract: "A drummer you can play with and train: drum MIDI files in, new drum parts out.",
            discussion: """
                Make a beat with the shipped drummer: drummer sample --bars 16 -o beat.mid \
                (humanize, play and tab below). Train your own on a folder of drum MIDI files: \
                drummer convert-midi DIR -o data, then drummer train --data data -o model. \
                drummer <command> --help documents every option.
                """,
            version: """
                drummer \(DrummerVersion.string)
                OpenBLAS core: \(BLASRuntime.selectionDescription), \(BLASRuntime.threads) thread(s)
                \(Kernels.versionLine)
                """,
            // Playing first, then training, then measuring.
            subcommands: [SampleCommand.self, HumanizeCommand.self, PlayCommand.self, TabCommand.self,
                          ConvertMIDI.self, TrainCommand.self, ExportCommand.self, ImportCommand.self, EvalCommand.self, ChooseStepCommand.self,
                          ReportCommand.self, StatsCommand.self, ContinuationCommand.self, EncodeCommand.self, Bench.self])
    }
}

extension Drummer {
    /// The names of the commands (and `help`).
    static var commandNames: [String] { commandNames(of: Drummer.self) }

    /// The subcommands of `group` (the top level, or `bench`), and help.
    static func commandNames(of group: ParsableCommand.Type) -> [String] {
        group.configuration.subcommands.map { $0.configuration.commandName ?? String(describing: $0).lowercased() } + ["help"]
    }

    /// A usage error of `command` as argument-parser words one found while parsing it: the
    /// message, the command's usage, and where its help is.
    static func usageError(_ message: String, of command: ParsableCommand.Type) -> String {
        var usage = usageString(for: command)
        if !usage.hasPrefix("Usage: ") { usage = "Usage: " + usage }
        // "drummer bench sample" of "Usage: drummer bench sample [--runs <runs>] …".
        let path = usage.dropFirst("Usage: ".count).split(separator: " ")
            .prefix { !$0.hasPrefix("<") && !$0.hasPrefix("[") && !$0.hasPrefix("-") }.joined(separator: " ")
        return "Error: \(message)\n\(usage)\n  See '\(path) --help' for more information."
    }

    /// The unknown-command error of a command line's words (after the program's name), if a
    /// command word names none: the first word (or the one after `help`, for which argument-parser
    /// prints the top-level help with status 0), and the word after `bench` (bench's help).
    static func unknownCommand(in words: ArraySlice<String>) -> String? {
        let first = words.first == "help" ? words.dropFirst().first : words.first
        if let word = first, !word.hasPrefix("-"), let message = unknownCommand(word) { return message }
        guard words.first == "bench", let word = words.dropFirst().first, !word.hasPrefix("-") else { return nil }
        return unknownCommand(word, in: Bench.self, path: "drummer bench")
    }

    /// An error message for `word` when it is not a command of `group` (called `path`): the
    /// nearest command when one is near (at most 2 edits, or a unique prefix), else the list of
    /// commands. nil for a command.
    static func unknownCommand(_ word: String, in group: ParsableCommand.Type = Drummer.self, path: String = "drummer") -> String? {
        let names = commandNames(of: group)
        guard !names.contains(word) else { return nil }
        let scored = names.map { ($0, editDistance(word.lowercased(), $0)) }.sorted { $0.1 < $1.1 }
        let prefixed = names.filter { $0.hasPrefix(word.lowercased()) }
        var text = "Error: unknown command '\(word)'."
        if prefixed.count == 1 {
            text += " Did you mean '\(prefixed[0])'?"
        } else if let best = scored.first, best.1 <= 2 {
            text += " Did you mean '\(best.0)'?"
        } else {
            text += " The commands are: " + names.filter { $0 != "help" }.joined(separator: ", ") + "."
        }
        return text + "\nUsage: \(path) <subcommand>\n  See '\(path) --help' for more information."
    }

    /// Levenshtein distance (insertions, deletions, substitutions; a transposition counts 2).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        var row = Array(0...y.count)
        for i in 1...max(1, x.count) where !x.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(1, y.count) where !y.isEmpty {
                let saved = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (x[i - 1] == y[j - 1] ? 0 : 1))
                previous = saved
            }
        }
        return x.isEmpty ? y.count : row[y.count]
    }
}
