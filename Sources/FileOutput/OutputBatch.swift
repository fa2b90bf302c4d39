// Several files one run writes (sample --count K, its --wav files): every destination is
// prepared (resolved, refused if it cannot be written, its temporary file created) before
// anything is written, the content goes into the temporary files, and all of them are put in
// place at the end. A failure on file 3 of 3 leaves files 1 and 2 as they were, rather than
// two complete-looking files of a failed batch.
//
// Two processes putting batches into one folder at once (two `sample --count 3 -o out/`) would
// interleave their renames (x1.mid of one run beside x2.mid of the other): the renames hold an
// exclusive flock(2) on each folder the batch writes into, so one batch lands whole after the
// other. The lock is on the folder itself, not a file in it: nothing is added to the user's folder.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
            let directories = Set(regular.compactMap { file -> String? in
                guard case .file(let target, _) = file.destination else { return nil }
                return AtomicOutput.parentDirectory(target)
            })
            let locks = FolderLocks(directories)
            defer { locks.release() }
            let failure: (index: Int, message: String)? = TemporaryFiles.withRegistryLocked { registry in
                for (i, file) in regular.enumerated() {
                    if let message = file.rename(holding: &registry) { return (i, message) }
                }
                return nil
            }
            if let failure { throw OutputError(path: regular[failure.index].path, message: failure.message) }
            for directory in directories { AtomicOutput.syncDirectory(directory) }
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

/// Exclusive flock(2)s on folders, taken in path order (two batches over the same folders cannot
/// each hold one and wait for the other) and kept until `release()` or deinit. A folder that
/// cannot be opened or locked (no read permission; a file system without flock) is written
/// without the lock, as before.
final class FolderLocks {
    private var descriptors: [Int32] = []

    init<S: Sequence<String>>(_ folders: S) {
        for folder in folders.sorted() {
            let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var status: Int32
            repeat { status = flock(fd, LOCK_EX) } while status != 0 && errno == EINTR
            if status == 0 { descriptors.append(fd) } else { close(fd) }
        }
    }

    deinit { release() }

    /// Closing a descriptor drops its lock.
    func release() {
        for fd in descriptors { close(fd) }
        descriptors = []
    }
}
