// `drummer import`: a safetensors file (a PyTorch-trained drummer, or one `export --format
// safetensors` wrote) → a model directory.
import ArgumentParser
import DrummerCore
import Export
import FileOutput
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn a safetensors file (PyTorch nn.LSTM + nn.Linear tensors) into a model directory.",
        discussion: """
            The file holds the tensors lstm.weight_ih_l{k}, lstm.weight_hh_l{k}, lstm.bias_ih_l{k}, \
            lstm.bias_hh_l{k} (PyTorch's gate order i, f, g, o) and head.weight, head.bias, and in its \
            metadata the model.json of the model (vocabulary, groups, sizes): what `drummer export \
            --format safetensors` and python/train_torch.py write. The gates are reordered into Wx's \
            column blocks f, i, o, g and the two bias vectors summed into Wx's bias row. A file \
            exported from a model directory imports to the same bytes. The directory is written as \
            `export` writes one (an existing model directory is replaced).
            """)

    @Argument(help: "The safetensors file.")
    var file: String

    @Option(name: [.customShort("o"), .customLong("output")], help: "Model directory to write.")
    var output: String = "model"

    func run() throws {
        InterruptCleanup.install()
        try InputOverlap.check(output: output, directory: true, inputs: [CommandInput(file, role: "the input safetensors file")])
        try ModelSource.checkRoom(file)
        let shape = try SafeTensorsImport.importModel(file, to: output)
        print("imported \(file) to \(output): " + ParameterLayout(shape).matrices.map { "\($0.name).bin \($0.rows)×\($0.cols)" }
            .joined(separator: ", ") + ", model.json")
    }
}
