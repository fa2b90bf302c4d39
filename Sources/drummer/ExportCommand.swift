// `drummer export`: checkpoint → deployable model directory.
import ArgumentParser
import DrummerCore
import Export
import Foundation

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a training checkpoint as a model directory (Wx.bin, Wy.bin, model.json).",
        discussion: """
            Wx.bin is (V+H+1) × 4H and Wy.bin (H+1) × V, flat row-major little-endian float32 (the \
            original project's layout); model.json holds the lookup tables, hidden size, shapes, gate \
            order, dtype, a SHA-256 of each .bin and the checkpoint's training metadata. The directory \
            is written under a temporary name and renamed into place.
            """)

    @Argument(help: ArgumentHelp("Training checkpoint (.h5) written by `drummer train`.", valueName: "ckpt"))
    var checkpoint: String

    @Option(name: [.customShort("o"), .customLong("output")], help: "Model directory to write (replaced if it exists).")
    var output: String = "model"

    @Option(help: "Also write a Swift source file with the sizes and lookup tables as constants (enum named after the file).")
    var swift: String?

    func validate() throws {
        guard !checkpoint.isEmpty else { throw ValidationError("CKPT must not be empty") }
        guard !output.isEmpty else { throw ValidationError("-o must name a directory") }
        if let s = swift {
            guard !s.isEmpty, !s.hasSuffix("/") else { throw ValidationError("--swift must name a file") }
        }
        guard FileManager.default.fileExists(atPath: checkpoint) else {
            throw ValidationError("checkpoint \(checkpoint) does not exist")
        }
    }

    func run() throws {
        let s = try Exporter.export(checkpoint: checkpoint, to: output, swiftFile: swift)
        print("exported \(checkpoint) (step \(s.step)) to \(s.directory): Wx.bin \(s.shape.wxRows)×\(s.shape.wxCols), "
              + "Wy.bin \(s.shape.wyRows)×\(s.shape.wyCols), model.json "
              + "(\(s.shape.notes) notes, \(s.shape.ticks) ticks, hidden \(s.shape.hidden))")
        if let f = s.swiftFile { print("wrote \(f)") }
    }
}
