// The one check that an output does not destroy what the command reads. An output is
// refused, before anything is written, when it resolves to one of the command's inputs:
// - the same file (symbolic links followed: the same device and inode), so `report in.mid
//   -o in.mid` does not replace the MIDI file by the page;
// - a path inside an input directory the command reads (a model, a dataset, a checkpoint
//   directory, a folder of MIDI files), so `export mdir -o mdir/Wx.bin` does not break the
//   model it reads, even where the file does not exist yet;
// - a directory output that holds an input: replacing the directory would delete it.
// An input read whole before anything is written (`export MODEL -o MODEL`) may be replaced
// by the output itself (`mayBeReplaced`), never written into. A directory whose files are all
// named by a rule (a checkpoint directory: ckpt-*.h5, train_log.csv, run.json, its lock) may
// take other files (`ownsName`: `report --checkpoints ck -o ck/report.html`); a name the rule
// claims, and the directory itself, are still refused.
// Standard output, descriptors, devices and FIFOs are written through, never replaced: they
// are not checked. A missing input is not checked either: its reader reports it.
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file or directory a command reads, named for the refusal ("the input checkpoint").
public struct CommandInput: Sendable {
    public let path: String
    /// What the input is to the command, with its article: "the primer", "the model directory".
    public let role: String
    /// True when the command reads it whole before writing, so that an output may replace it
    /// (still not be written inside it).
    public let mayBeReplaced: Bool
    /// For a directory whose own files are all named by a rule: the rule (true: a name the
    /// directory owns). An output inside it under another name is then allowed; nil: nothing
    /// may be written inside.
    public let ownsName: (@Sendable (String) -> Bool)?

    public init(_ path: String, role: String, mayBeReplaced: Bool = false, ownsName: (@Sendable (String) -> Bool)? = nil) {
        self.path = path
        self.role = role
        self.mayBeReplaced = mayBeReplaced
        self.ownsName = ownsName
    }
}

public enum InputOverlap {
    /// Throws an OutputError naming `output` when writing it would replace, break or delete one
    /// of `inputs` (see above). `directory`: the output is a directory, replaced as a whole.
    public static func check(output: String, directory: Bool = false, inputs: [CommandInput]) throws {
        guard let target = location(of: output, directory: directory) else { return }
        let outputID = FileID(target)
        let outputAncestors = FileID.ancestors(of: target)
        for input in inputs where !input.path.isEmpty && input.path != "-" {
            guard let inputID = FileID(input.path), inputID.isFileOrDirectory else { continue }
            let refuse = { (what: String) in
                OutputError(path: output, message: "\(what) \(input.role) \(input.path); write elsewhere")
            }
            if let outputID, outputID == inputID {
                if input.mayBeReplaced && directory { continue }
                throw refuse("is")
            }
            if inputID.isDirectory, let owns = input.ownsName, outputAncestors.contains(inputID) {
                // Only a name the directory owns, directly inside it, is its file.
                if outputAncestors.first == inputID, owns((target as NSString).lastPathComponent) {
                    throw refuse("is a file of")
                }
            } else if inputID.isDirectory, outputAncestors.contains(inputID) {
                throw refuse("lies inside")
            }
            if directory, let outputID, outputID.isDirectory,
               let real = AtomicOutput.realPath(input.path), FileID.ancestors(of: real).contains(outputID) {
                throw OutputError(path: output, message: "holds \(input.role) \(input.path), which replacing "
                                  + "the directory would delete; write elsewhere")
            }
        }
    }

    /// Where `output` leads (symbolic links followed), or nil for what is written through
    /// rather than replaced (standard output, descriptors, devices, FIFOs).
    static func location(of output: String, directory: Bool) -> String? {
        guard !output.isEmpty, output != "-", AtomicOutput.descriptorNumber(output) == nil else { return nil }
        if directory {
            return AtomicOutput.realPath(output) ?? output
        }
        switch try? AtomicOutput.resolve(output, options: .userFile) {
        case .file(let path, _)?: return path
        case .stream?, .descriptor?: return nil
        case nil: return AtomicOutput.realPath(output) ?? output   // a directory, say: still checked
        }
    }
}

/// A file's identity: device and inode, symbolic links followed.
struct FileID: Hashable {
    let device: UInt64
    let inode: UInt64
    let mode: UInt32

    init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        mode = UInt32(st.st_mode & S_IFMT)
    }

    var isDirectory: Bool { mode == UInt32(S_IFDIR) }
    var isFileOrDirectory: Bool { isDirectory || mode == UInt32(S_IFREG) }

    static func == (a: FileID, b: FileID) -> Bool { a.device == b.device && a.inode == b.inode }
    func hash(into h: inout Hasher) {
        h.combine(device)
        h.combine(inode)
    }

    /// The directories holding `path` (which need not exist), innermost first, up to the root:
    /// found from the nearest existing directory, its symbolic links resolved.
    static func ancestors(of path: String) -> [FileID] {
        var p = PathNames.parent(of: path)
        var real: String?
        for _ in 0..<4096 {
            if let r = AtomicOutput.realPath(p) { real = r; break }
            if p == "." || p == "/" { break }
            p = PathNames.parent(of: p)
        }
        guard var dir = real else { return [] }
        var ids: [FileID] = []
        while true {
            if let id = FileID(dir) { ids.append(id) }
            if dir == "/" { break }
            dir = PathNames.parent(of: dir)
        }
        return ids
    }
}
