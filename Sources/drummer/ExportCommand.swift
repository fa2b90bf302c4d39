// `drummer export`: checkpoint → deployable model directory.
import ArgumentParser
import Checkpoints
import DrummerCore
import Export
import ModelFiles
import ONNXExport
import Foundation
import FileOutput

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a training checkpoint as a model directory (Wx.bin, Wy.bin, model.json), safetensors or ONNX.",
        discussion: """
            Wx.bin is (I+H+1) × 4H and Wy.bin (H+1) × O, flat row-major little-endian float32 (the \
            original project's layout: I = O = V, notes + ticks; a grid model's I one-hot inputs and O \
            outputs; a second layer's weights in Wx1.bin, and so on); model.json holds the lookup tables, hidden size, shapes, gate \
            order, dtype, a SHA-256 of each .bin and the checkpoint's training metadata. The directory \
            is written under a temporary name and swapped into place; an existing directory is \
            replaced only when it is empty or a model directory (holds model.json), and a symbolic \
            link to a directory is followed. Both outputs are checked before either is written. \
            --swift - writes the Swift source to standard output (the summary then goes to standard \
            error). --format safetensors writes PyTorch's nn.LSTM and nn.Linear tensors (drummer import \
            reads them back) and --format onnx a one-step ONNX graph. A model directory as input is \
            written again in any format, with the sampling temperatures it carries or --temperature's. \
            Ctrl-C removes the temporary output and exits with status 130.
            """)

    @Argument(help: ArgumentHelp("Training checkpoint (.h5) written by `drummer train`, or a checkpoint directory (see --step); or an exported model directory, or an installed one's name (groove: see docs/install.md) (its weights written again: with new --temperature defaults, as safetensors or as ONNX).", valueName: "ckpt"))
    var checkpoint: String

    @Option(help: "What to write: model (a model directory), safetensors (one file with PyTorch nn.LSTM and nn.Linear tensors and the model.json in its metadata; drummer import reads it back) or onnx (a one-step ONNX graph for ONNX Runtime).")
    var format: ExportFormat = .model

    enum ExportFormat: String, ExpressibleByArgument, CaseIterable { case model, safetensors, onnx }

    @Option(parsing: .unconditional, help: "With a checkpoint directory: which checkpoint, best (lowest validation loss), latest or a step number (default best).", transform: CheckpointChoice.argument)
    var step: CheckpointChoice?

    @Option(name: [.customShort("o"), .customLong("output")], help: "Model directory to write (an existing model directory is replaced); with --format safetensors or onnx the file (default: model, model.safetensors or model.onnx); -o may name the model directory given as input.")
    var output: String?

    var destination: String { output ?? (format == .model ? "model" : "model.\(format.rawValue)") }

    @Option(help: "Also write a Swift source file with the sizes and lookup tables as constants (enum named after the file); - for standard output.")
    var swift: String?

    @Option(parsing: .unconditional, help: "Sampling temperatures to record in model.json's sampling, the model's defaults for sample and humanize: one number for every output group or group=T pairs (hits=1,velocity=1.2); with a model directory as input, replaces the ones it carries (default: none, or the model directory's).")
    var temperature: String?

    func validate() throws {
        if let t = temperature { _ = try SampleCommand.setting(t) }
        guard !checkpoint.isEmpty else { throw ValidationError("CKPT must not be empty") }
        guard destination != "" else { throw ValidationError("-o must name a directory") }
        if format != .model, swift != nil { throw ValidationError("--swift goes with --format model") }
        if let s = swift {
            guard !s.isEmpty, !s.hasSuffix("/") else { throw ValidationError("--swift must name a file") }
            // The model directory is put in place whole, after the Swift file's temporary is
            // made: a Swift file in it (or at its path) would go with the directory it replaces.
            if s != "-", PathNames.containment(of: s, in: destination) != .outside {
                throw ValidationError("--swift \(s) lies in the model directory -o \(destination), which export replaces "
                    + "whole: write the Swift file beside it")
            }
        }
    }

    func run() throws {
        InterruptCleanup.install()
        // An installed model by its name, as sample finds it (a path is itself).
        let checkpoint = try ModelLocator.resolve(self.checkpoint)
        // A missing input is a run-time failure (exit 1), as for sample, eval and encode.
        guard FileManager.default.fileExists(atPath: checkpoint) else {
            throw CommandFailure("\(checkpoint): no such checkpoint, checkpoint directory or model directory")
        }
        // The status lines go to standard error when an output takes standard output: --swift -
        // beside a model directory, or a safetensors or ONNX file's -o -.
        let status = try format == .model
            ? Console.statusLines(toStandardError: swift.map { try AtomicOutput.resolve($0, options: .userFile).isStandardOutput } ?? false)
            : Console.statusLines(besideOutputAt: destination)
        var source = checkpoint, why = ""
        var isDir: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: checkpoint, isDirectory: &isDir)
        let isModelDirectory = exists && isDir.boolValue
            && FileManager.default.fileExists(atPath: (checkpoint as NSString).appendingPathComponent("model.json"))
        // Neither output may be the input, or lie inside it (a model directory is read whole
        // first, so a model directory output may replace it).
        let input = CommandInput(checkpoint, role: isModelDirectory ? "the input model directory"
                                 : exists && isDir.boolValue ? "the input checkpoint directory" : "the input checkpoint",
                                 mayBeReplaced: isModelDirectory && format == .model,
                                 ownsName: exists && isDir.boolValue && !isModelDirectory
                                    ? CommandInput.checkpointDirectory(checkpoint).ownsName : nil)
        // A checkpoint file's directory owns its other checkpoints, log and run record too.
        let holding = exists && !isDir.boolValue ? CommandInput.checkpointDirectory(holding: checkpoint) : nil
        let inputs = [input] + (holding.map { [$0] } ?? [])
        try InputOverlap.check(output: destination, directory: format == .model, inputs: inputs)
        if let swift { try InputOverlap.check(output: swift, inputs: inputs) }
        if isModelDirectory {
            if let step { throw ValidationError("--step \(step) applies to a checkpoint directory; \(checkpoint) is a model directory") }
            try ModelSource.checkRoom(checkpoint)
            // Read whole before anything is written, so -o may name the model directory itself.
            let m = try ModelDirectory.load(path: checkpoint)
            let sampling = try sampling(for: m.groups, defaults: m.sampling)
            guard format == .model else {
                try writeFile(weights: m.weights, groups: m.groups, metadata: m.metadata, sampling: sampling)
                status("exported \(checkpoint) to \(destination): \(format.rawValue), " + Self.describe(m.weights.shape, format))
                return
            }
            // A model directory again (new temperatures, or a Swift file): the same weights.
            let s = try Exporter.export(weights: m.weights, groups: m.groups, step: nil, metadata: m.metadata,
                                        sampling: sampling, to: destination, swiftFile: swift)
            report(s, source: checkpoint, why: "", status: status)
            return
        }
        if exists, isDir.boolValue {
            (source, why) = try CheckpointDirectory(path: checkpoint).checkpoint(step ?? .best)
            why = ", " + why
        } else if let step {
            throw ValidationError("--step \(step) applies to a checkpoint directory; \(checkpoint) is a file")
        }
        try ModelSource.checkRoom(source)
        if format != .model {
            let m = try Exporter.model(checkpoint: source)
            try writeFile(weights: m.weights, groups: m.groups, metadata: m.metadata,
                          sampling: try sampling(for: m.groups))
            status("exported \(source)\(why.isEmpty ? "" : " (" + why.dropFirst(2) + ")") to \(destination): \(format.rawValue), "
                        + Self.describe(m.weights.shape, format))
            return
        }
        let model = try CheckpointReader.loadModel(path: source)
        let s = try Exporter.export(model: model, sampling: try sampling(for: model.groups),
                                    to: destination, swiftFile: swift)
        report(s, source: source, why: why, status: status)
    }

    /// The summary of a model directory written, through `print` (on standard error when
    /// --swift - took standard output).
    func report(_ s: ExportSummary, source: String, why: String, status print: (String) -> Void) {
        let matrices = s.shape.parameters.matrices.map { "\($0.name).bin \($0.rows)×\($0.cols)" }.joined(separator: ", ")
        print("exported \(source) (\(s.stepDescription)\(why)) to \(s.directory): \(matrices), model.json "
              + (s.shape.lossGroups == s.shape.outputGroups.count && s.shape.outputGroups[0] == GridGroup.hitSets
                 ? "(grid layout: \(GridGroup.hitSets) hit sets, hidden \(s.shape.hidden)"
                 : "(\(s.shape.notes) notes, \(s.shape.ticks) ticks, hidden \(s.shape.hidden)")
              + (s.shape.layers > 1 ? ", \(s.shape.layers) layers)" : ")"))
        if let f = s.swiftFile { print("wrote \(f)") }
    }

    /// The sampling defaults to record: --temperature over `defaults`' temperatures (groups at 1
    /// are not written).
    func sampling(for groups: ModelGroups, defaults: SamplingDefaults = SamplingDefaults()) throws -> SamplingDefaults {
        SamplingDefaults(temperatures: try SampleCommand.temperatures(temperature, for: groups, defaults: defaults.temperatures).resolved)
    }

    /// The safetensors or ONNX file of a model (written atomically).
    func writeFile(weights: LSTMWeights, groups: ModelGroups, metadata: [String: String], sampling: SamplingDefaults) throws {
        let data: Data
        switch format {
        case .safetensors:
            data = try TorchModel.encode(weights: weights, groups: groups, metadata: metadata, sampling: sampling, path: destination)
        case .onnx:
            let manifest = try Exporter.manifest(weights: weights, groups: groups, metadata: metadata,
                                                 sampling: sampling, path: destination)
            data = try ONNXGraph.encode(weights: weights, groups: groups, modelJSON: manifest)
        case .model: preconditionFailure("a model directory is written by Exporter.export")
        }
        try AtomicOutput.write(data, to: destination, options: .userFile)
    }

    /// What the file holds, in a line.
    static func describe(_ shape: ModelShape, _ format: ExportFormat) -> String {
        let model = "\(shape.layers) LSTM layer(s) of \(shape.hidden) over \(shape.inputWidth) one-hot inputs, a head of \(shape.outputWidth) logits"
        return format == .onnx
            ? model + " (one step per call: inputs classes, h0, c0, …; outputs logits_<group>, h0_next, c0_next, …)"
            : model + " (tensors lstm.weight_ih_l0 … lstm.bias_hh_l\(shape.layers - 1), head.weight, head.bias)"
    }
}
