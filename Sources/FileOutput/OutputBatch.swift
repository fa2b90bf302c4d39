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
    /// that was skipped, is left out): the streams (`-`, a pipe, a device) first, since a stream
    /// that fails (a reader gone) cannot be taken back and the files are then left out; then the
    /// regular files, each synced to disk, and renamed into place all at once under the registry's
    /// lock, so that an interrupt finds all of them in place or none.
    public func commit() throws {
        do {
            for file in files where file.isPending && !file.destination.isRegularFile { try file.commitTemporaryFile() }
            let regular = files.filter { $0.isPending && $0.destination.isRegularFile }
            for file in regular { try file.finishTemporaryFile() }
            let failure: (index: Int, message: String)? = TemporaryFiles.withRegistryLocked { registry in
                for (i, file) in regular.enumerated() {
                    if let message = file.rename(holding: &registry) { return (i, message) }
                }
                return nil
            }
            if let failure { throw OutputError(path: regular[failure.index].path, message: failure.message) }
            for directory in Set(regular.compactMap { file -> String? in
                guard case .file(let target, _) = file.destination else { return nil }
                return AtomicOutput.parentDirectory(target)
            }) { AtomicOutput.syncDirectory(directory) }
        } catch {
            discard()
            throw error
        }
    }

    /// Removes every temporary file: nothing is written.
    public func discard() {
        for file in files { file.discard() }
    }
}
