// `drummer encode`: the input classes a model reads for a dataset, as a NumPy array: what
// `drummer train` and `drummer eval` feed the model, for trainers outside drummer
// (python/train_torch.py).
import ArgumentParser
import DrummerCore
import Encode
import FileOutput
import Foundation
import ModelFiles
import TrainRun

struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Write the input classes a model reads for a dataset (int32 .npy, one row per step the model reads, one column per input group).",
        discussion: """
            A step is a hit for a model of the 2017 layout, a 16th note (and a start row per file) \
            for a grid model. Row e holds step e's class in each of the model's input groups \
            (model.json's groups, in order: a grid model's hits, velocity_*, offset_*, position, phrase, \
            lookback_*, repeat_*, style; the 2017 layout's note and tick), exactly as `drummer train` and \
            `drummer eval` encode it; the next row's classes in the groups named like the output \
            groups are the targets. A model directory or a checkpoint gives the groups (a new run's \
            step-0 checkpoint is enough: `drummer train --steps 0`). python/train_torch.py reads it.
            """)

    @Argument(help: "Model directory (model.json), the name of an installed one (groove: see docs/install.md), or training checkpoint (.h5) whose groups to encode with.")
    var model: String

    @Option(help: "Dataset directory (convert-midi output; DIR/validation for its validation set) or a MIDI file, converted as convert-midi converts it (see --ppq, --quantize).")
    var data: String

    @OptionGroup var reading: MIDIReadOptions

    @Option(name: [.customShort("o"), .customLong("output")], help: "The .npy file to write.")
    var output: String

    func run() throws {
        InterruptCleanup.install()
        let model = try ModelLocator.resolve(self.model)
        try InputOverlap.check(output: output, inputs: ModelSource.inputs(model) + [CommandInput(data, role: "the input data")])
        let m = try EvaluatedModel.load(path: model)
        let classes = try EvalInput.events(path: data, model: m, ppq: reading.ppq, quantize: reading.quantize).events
        let k = m.weights.shape.inputGroups.count
        // An empty array written as a success would read as data that has nothing in it.
        guard !classes.isEmpty else {
            throw CommandFailure("\(data): nothing to encode: no file gives the model a row"
                                 + (m.groups.grid != nil ? " (a grid model reads the 4/4 files with drum hits)" : ""))
        }
        let status = Console.statusLines(besideOutputAt: output)
        try AtomicOutput.write(try NPY.encode(int32: classes, shape: [classes.count / k, k]), to: output, options: .userFile)
        status("wrote \(output): \(classes.count / k) rows × \(k) input groups (\(m.groups.inputNames.joined(separator: ", ")))")
    }
}
