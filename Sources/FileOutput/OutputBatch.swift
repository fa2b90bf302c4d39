// Several files one run writes (sample --count K, its --wav files): every destination is
// prepared (resolved, refused if it cannot be written, its temporary file created) before
// anything is written, the content goes into the temporary files, and all of them are put in
// place at the end. A failure on file 3 of 3 leaves files 1 and 2 as they were, rather than
// two complete-looking files of a failed batch.
import Foundation

public final class OutputBatch {
    private var files: [PendingFile] = []
    /// The regular files prepared, by their final target, and the path each was given as.
    private var targets: [String: String] = [:]

    public init() {}

    deinit { discard() }

    /// Prepares `path` (with a temporary file, for any destination) as one file of the batch.
    /// Two outputs of the batch that lead to one file are refused.
    public func prepare(_ path: String, options: OutputOptions) throws -> PendingFile {
        let pending = try AtomicOutput.prepare(path, options: options, temporaryFile: true)
        if case .file(let target, _) = pending.destination {
            let parent = PathNames.parent(of: target)
            let key = ((AtomicOutput.realPath(parent) ?? parent) as NSString)
                .appendingPathComponent((target as NSString).lastPathComponent)
            if let other = targets[key] {
                pending.discard()
                throw OutputError(path: path, message: "is also the output \(other) of this run; write elsewhere")
            }
            targets[key] = path
        }
        files.append(pending)
        return pending
    }

    /// Puts every file still pending in place (a file discarded on the way, say a rendering
    /// that was skipped, is left out), in the order prepared, the streams (`-`, a pipe, a
    /// device) first: a stream that fails (a reader gone) cannot be taken back, and the files
    /// after it are then left out rather than put in place beside a failed run.
    public func commit() throws {
        let streamsFirst = files.filter { !$0.isRegularFile } + files.filter(\.isRegularFile)
        for file in streamsFirst where file.isPending {
            do { try file.commitTemporaryFile() } catch {
                discard()
                throw error
            }
        }
    }

    /// Removes every temporary file: nothing is written.
    public func discard() {
        for file in files { file.discard() }
    }
}
