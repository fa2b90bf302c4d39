// Every output the tool writes goes through here. Rules (README, "Outputs"):
//
// Files (`write`, `prepare`, `file`):
// - `-` is standard output, where the caller allows it (OutputOptions.userFile);
// - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: that open descriptor,
//   written through (userFile only);
// - a symbolic link (a chain, relative or absolute) is followed to its final
//   target, which is replaced; the link stays a link. A dangling link creates its
//   target when the target's directory exists;
// - an existing regular file is replaced atomically: a temporary file beside it
//   is written, fsync'd, given the old file's permission bits and renamed over it
//   (then the directory is fsync'd). Readers see the old file or the whole new one;
// - an existing character device or FIFO is opened and written through, never
//   renamed over (userFile only: `-o /dev/null`; a FIFO waits for its reader);
//   internal outputs refuse it. A block device or a socket is always refused;
// - a directory where a file is meant is refused ("is a directory");
// - a missing parent directory is created.
//
// Directories (`directory`, `prepareDirectory`):
// - built under a temporary name beside the destination and swapped into place
//   (renameat2 RENAME_EXCHANGE where available, else the old one is moved aside
//   first), so the destination is always the old or the whole new directory;
// - an existing path that is not a directory is refused; an existing directory is
//   replaced only when it is empty or recognised as the tool's own (DirectoryKind:
//   a model directory holds model.json, a dataset directory convert-midi's
//   manifest.json) and holds nothing the tool does not write there (a TRAINING.md
//   beside a model is refused by name, never deleted); a symlink to a directory is
//   followed and the link kept.
//
// Temporaries are named and swept by TemporaryFiles (the destination's directory
// is swept once per process before the first write there) and registered while
// they exist, so InterruptCleanup removes them on Ctrl-C.
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct OutputError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}

/// Which destinations an output accepts besides regular files.
public struct OutputOptions: Sendable, Equatable {
    /// `-` means standard output.
    public var standardOutput: Bool
    /// Existing character devices and FIFOs, and descriptor paths (/dev/stdout,
    /// /dev/fd/N), are written through.
    public var streams: Bool

    public init(standardOutput: Bool = false, streams: Bool = false) {
        self.standardOutput = standardOutput
        self.streams = streams
    }

    /// Files the tool writes for itself (.npy files, train_log.csv): a regular file only.
    public static let file = OutputOptions()
    /// A single file the user names (sample -o, --wav, export --swift): also `-`,
    /// descriptors, character devices and FIFOs.
    public static let userFile = OutputOptions(standardOutput: true, streams: true)
}

/// Where a file output goes, once symbolic links are followed.
public enum OutputDestination: Equatable, Sendable {
    /// An open descriptor: 1 for `-` and /dev/stdout, 2 for /dev/stderr, N for /dev/fd/N.
    case descriptor(Int32)
    /// An existing character device or FIFO, opened and written through.
    case stream(path: String)
    /// A regular file, replaced (or created) through a temporary file and rename(2).
    /// `path` is the final target of a symbolic link; `existingMode` the permission
    /// bits of the file replaced (nil for a new file).
    case file(path: String, existingMode: UInt32?)

    public var isStandardOutput: Bool { self == .descriptor(1) }

    /// True for a regular file (existing or new).
    public var isRegularFile: Bool {
        if case .file = self { return true }
        return false
    }
}

/// A file output whose destination is resolved and, for a regular file, whose
/// temporary file exists (so the directory is known to be writable). `commit`
/// puts the content in place; `discard` (or deinit) removes the temporary.
public final class PendingFile {
    /// The path as given.
    public let path: String
    public let destination: OutputDestination
    /// The temporary file that `commit` renames (regular files) or copies (streams,
    /// when requested by `prepare(..., temporaryFile: true)`); nil otherwise.
    public let temporaryPath: String?
    private var registration: TemporaryFiles.Registration?

    init(path: String, destination: OutputDestination, temporaryPath: String?,
         registration: TemporaryFiles.Registration?) {
        self.path = path
        self.destination = destination
        self.temporaryPath = temporaryPath
        self.registration = registration
    }

    deinit { discard() }

    /// Writes `data` to the destination: into the temporary file, then renamed into
    /// place; or straight into a stream or descriptor.
    public func commit(_ data: Data) throws {
        switch destination {
        case .file(let target, let mode):
            guard let tmp = temporaryPath else { preconditionFailure("a regular-file output has a temporary file") }
            do {
                try AtomicOutput.withDescriptor(tmp, flags: O_WRONLY | O_TRUNC | O_CLOEXEC) { fd in
                    try AtomicOutput.writeAll(data, to: fd)
                    try AtomicOutput.finish(fd, mode: mode)
                }
            } catch let e as AtomicOutput.SystemCallError {
                discard()
                throw OutputError(path: path, message: "cannot write\(e.what.isEmpty ? "" : " " + e.what): \(ErrorText.errno(e.code))")
            }
            try moveIntoPlace(target)
        case .stream, .descriptor:
            try AtomicOutput.writeThrough(data, destination: destination, path: path)
            discard()
        }
    }

    /// Writes `data` into the temporary file (from `prepare(..., temporaryFile: true)`) without
    /// putting it in place: a command writing several files stages them all and commits them
    /// at the end (`commitTemporaryFile`), so a failure on one leaves none of them written.
    public func stage(_ data: Data) throws {
        guard let tmp = temporaryPath else { preconditionFailure("prepare(..., temporaryFile: true) gives a temporary file") }
        do {
            try AtomicOutput.withDescriptor(tmp, flags: O_WRONLY | O_TRUNC | O_CLOEXEC) { fd in
                try AtomicOutput.writeAll(data, to: fd)
            }
        } catch let e as AtomicOutput.SystemCallError {
            discard()
            throw OutputError(path: path, message: "cannot write\(e.what.isEmpty ? "" : " " + e.what): \(ErrorText.errno(e.code))")
        }
    }

    /// Puts the temporary file, filled by `stage` or by someone else (say a child process), in place.
    public func commitTemporaryFile() throws {
        guard let tmp = temporaryPath else { preconditionFailure("prepare(..., temporaryFile: true) gives a temporary file") }
        switch destination {
        case .file(let target, _):
            try finishTemporaryFile()
            try moveIntoPlace(target)
        case .stream, .descriptor:
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: tmp)) } catch {
                discard()
                throw OutputError(path: path, message: "cannot read the temporary file \(tmp): \(ErrorText.describe(error))")
            }
            defer { discard() }
            try AtomicOutput.writeThrough(data, destination: destination, path: path)
        }
    }

    /// A regular file's temporary synced to disk with its mode set: all of committing it but the
    /// rename (OutputBatch finishes every file, then renames them all at once).
    func finishTemporaryFile() throws {
        guard let tmp = temporaryPath, case .file(_, let mode) = destination else { return }
        do {
            try AtomicOutput.withDescriptor(tmp, flags: O_RDONLY | O_CLOEXEC) { fd in
                try AtomicOutput.finish(fd, mode: mode)
            }
        } catch let e as AtomicOutput.SystemCallError {
            discard()
            throw OutputError(path: path, message: "cannot write\(e.what.isEmpty ? "" : " " + e.what): \(ErrorText.errno(e.code))")
        }
    }

    /// Renames a finished regular file's temporary into place, with the registry's lock held by
    /// the caller; the error's message when the rename fails (the temporary is then left for
    /// `discard`).
    func rename(holding registry: inout TemporaryFiles.Registry) -> String? {
        guard let tmp = temporaryPath, let registration, case .file(let target, _) = destination else { return nil }
        if posixRename(tmp, target) != 0 { return "cannot rename the temporary file into place: \(ErrorText.lastErrno)" }
        registry.placed(registration)
        self.registration = nil
        return nil
    }

    /// False once the temporary file is committed or discarded.
    public var isPending: Bool { registration != nil }

    /// Removes the temporary file (nothing is written). Harmless after `commit`.
    public func discard() {
        guard let registration else { return }
        if let tmp = temporaryPath { unlink(tmp) }
        TemporaryFiles.unregister(registration)
        self.registration = nil
    }

    private func moveIntoPlace(_ target: String) throws {
        guard isPending else { return }
        if let message = TemporaryFiles.withRegistryLocked({ rename(holding: &$0) }) {
            discard()
            throw OutputError(path: path, message: message)
        }
        AtomicOutput.syncDirectory(AtomicOutput.parentDirectory(target))
    }
}

/// A directory output being built: fill `url`, then `commit`.
public final class PendingDirectory {
    /// The path as given.
    public let path: String
    /// Where the directory goes (the final target of a symbolic link).
    public let destination: String
    /// The temporary directory to fill.
    public let url: URL
    private let replacesMode: mode_t?
    private var registration: TemporaryFiles.Registration?

    init(path: String, destination: String, url: URL, replacesMode: mode_t?, registration: TemporaryFiles.Registration) {
        self.path = path
        self.destination = destination
        self.url = url
        self.replacesMode = replacesMode
        self.registration = registration
    }

    deinit { discard() }

    /// Removes the temporary directory (nothing is written). Harmless after `commit`.
    public func discard() {
        guard let registration else { return }
        try? FileManager.default.removeItem(at: url)
        TemporaryFiles.unregister(registration)
        self.registration = nil
    }

    /// Syncs the temporary directory's files to disk and swaps it into place.
    public func commit() throws {
        guard let registration else { return }
        let tmp = url.path
        AtomicOutput.syncTree(tmp)
        if let mode = replacesMode { chmod(tmp, mode) }
        enum Outcome { case placed, exchanged, movedAside(String, TemporaryFiles.Registration), failed(String) }
        let outcome: Outcome = TemporaryFiles.withRegistryLocked { registry in
            var st = stat()
            if lstat(destination, &st) != 0 {
                if posixRename(tmp, destination) == 0 {
                    registry.placed(registration)
                    return .placed
                }
                // Made since it was checked (another run writing the same output at once): its
                // contents were never checked, so it is not replaced.
                if errno == ENOTEMPTY || errno == EEXIST {
                    return .failed("it appeared while this run wrote it (another run writing the same output?); "
                        + "not replacing it: run again, or choose another path")
                }
                return .failed("cannot rename the new directory into place: \(ErrorText.lastErrno)")
            }
            // The temporary name now holds the old directory, still registered (as the old copy).
            if AtomicOutput.exchange(tmp, destination) {
                registry.placed(registration, oldCopyRemains: true)
                return .exchanged
            }
            let aside = (AtomicOutput.parentDirectory(destination) as NSString)
                .appendingPathComponent(TemporaryFiles.asideName(for: (destination as NSString).lastPathComponent))
            guard posixRename(destination, aside) == 0 else {
                return .failed("cannot move the old directory aside: \(ErrorText.lastErrno)")
            }
            guard posixRename(tmp, destination) == 0 else {
                let message = "cannot rename the new directory into place: \(ErrorText.lastErrno)"
                _ = posixRename(aside, destination)
                return .failed(message)
            }
            registry.placed(registration)
            return .movedAside(aside, registry.add(aside, destination: destination, oldCopy: true))
        }
        switch outcome {
        case .failed(let message):
            discard()
            throw OutputError(path: path, message: message)
        case .placed:
            self.registration = nil
        case .exchanged:
            discard()   // removes the old directory, now under the temporary name
        case .movedAside(let aside, let asideRegistration):
            self.registration = nil
            try? FileManager.default.removeItem(atPath: aside)
            TemporaryFiles.unregister(asideRegistration)
        }
        AtomicOutput.syncDirectory(AtomicOutput.parentDirectory(destination))
    }
}

/// What may be replaced by a directory output: an empty directory, or one this
/// recognises as the tool's own and that holds nothing else: a file the tool does
/// not write there (a README, training notes) is never deleted by a replacement.
public struct DirectoryKind: Sendable {
    /// "a drummer model directory", for the refusal message.
    public let name: String
    let recognizes: @Sendable (String) -> Bool
    /// The entries the tool writes in such a directory (file or directory names);
    /// `nestedOwned` lists, per owned subdirectory, the entries it may hold.
    package let owned: Set<String>
    let nestedOwned: [String: Set<String>]

    public init(name: String, owned: Set<String>, nestedOwned: [String: Set<String>] = [:],
                recognizes: @escaping @Sendable (String) -> Bool) {
        self.name = name
        self.owned = owned
        self.nestedOwned = nestedOwned
        self.recognizes = recognizes
    }

    /// Entries of `dir` (relative paths, sorted) the tool does not write: what a
    /// replacement would delete that is not the tool's. Stale temporaries of the
    /// tool count as its own.
    public func foreignEntries(in dir: String) -> [String] {
        func list(_ path: String) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] }
        func isOurs(_ name: String, _ allowed: Set<String>) -> Bool {
            allowed.contains(name) || TemporaryFiles.parse(name) != nil
        }
        var foreign: [String] = []
        for entry in list(dir) {
            guard isOurs(entry, owned) else { foreign.append(entry); continue }
            if let inner = nestedOwned[entry] {
                let sub = (dir as NSString).appendingPathComponent(entry)
                foreign += list(sub).filter { !isOurs($0, inner) }.map { "\(entry)/\($0)" }
            }
        }
        return foreign.sorted()
    }

    /// An exported model: holds model.json. Its files: model.json, Wy.bin and one fused matrix
    /// per layer, Wx.bin, Wx1.bin, … Wx15.bin (ModelLimits.maximumLayers = 16 layers; a test
    /// checks that the two agree).
    public static let model = DirectoryKind(name: "a drummer model directory (no model.json)",
                                            owned: Set(["model.json", "Wx.bin", "Wy.bin"] + (1..<16).map { "Wx\($0).bin" })) { dir in
        AtomicOutput.isRegularFile((dir as NSString).appendingPathComponent("model.json"))
    }

    static let datasetFiles: Set<String> = ["manifest.json", "vocab.json", "events.npy", "X.npy",
                                            "velocities.npy", "positions.npy", "onsets.npy"]

    /// convert-midi output: holds a manifest.json written by drummer convert-midi.
    public static let dataset = DirectoryKind(name: "a drummer dataset directory (no convert-midi manifest.json)",
                                              owned: datasetFiles.union(["validation"]),
                                              nestedOwned: ["validation": datasetFiles]) { dir in
        let file = (dir as NSString).appendingPathComponent("manifest.json")
        guard AtomicOutput.isRegularFile(file), let data = FileManager.default.contents(atPath: file),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let tool = json["tool"] as? String
        else { return false }
        return tool.hasPrefix("drummer")
    }

    /// Either of the above.
    public static let drummerOutput = DirectoryKind(
        name: "a drummer model or dataset directory (no model.json or convert-midi manifest.json)",
        owned: model.owned.union(dataset.owned), nestedOwned: dataset.nestedOwned
    ) { model.recognizes($0) || dataset.recognizes($0) }
}

public enum AtomicOutput {
    // MARK: - Files

    /// Writes `data` to `path` following the rules above: regular files are replaced
    /// atomically; with `.userFile`, `-`, descriptors, devices and FIFOs are written through.
    public static func write(_ data: Data, to path: String, options: OutputOptions = .file) throws {
        let pending = try prepare(path, options: options)
        try pending.commit(data)
    }

    /// Resolves `path` and, for a regular file, creates its temporary file (which
    /// checks that the directory is writable) without touching the destination.
    /// With `temporaryFile`, streams and descriptors get one too (in the system's
    /// temporary directory), for a producer that needs a file to write.
    public static func prepare(_ path: String, options: OutputOptions = .file,
                               temporaryFile: Bool = false) throws -> PendingFile {
        let destination = try resolve(path, options: options)
        switch destination {
        case .file(let target, _):
            let dir = parentDirectory(target)
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                throw OutputError(path: path, message: "cannot create its directory \(dir): \(ErrorText.describe(error))")
            }
            TemporaryFiles.sweepOnce(directory: dir)
            let tmp = (dir as NSString).appendingPathComponent(
                TemporaryFiles.temporaryName(for: (target as NSString).lastPathComponent))
            let (registration, code) = createFile(tmp, destination: path)
            guard let registration else {
                throw OutputError(path: path, message: "cannot create a file in \(dir): \(ErrorText.errno(code))")
            }
            return PendingFile(path: path, destination: destination, temporaryPath: tmp, registration: registration)
        case .stream(let target):
            guard access(target, W_OK) == 0 else {
                throw OutputError(path: path, message: "cannot write: \(ErrorText.lastErrno)")
            }
            fallthrough
        case .descriptor:
            guard temporaryFile else {
                return PendingFile(path: path, destination: destination, temporaryPath: nil, registration: nil)
            }
            let dir = NSTemporaryDirectory()
            TemporaryFiles.sweepOnce(directory: dir)
            let tmp = (dir as NSString).appendingPathComponent(
                TemporaryFiles.temporaryName(for: (path as NSString).lastPathComponent))
            let (registration, code) = createFile(tmp, destination: path)
            guard let registration else {
                throw OutputError(path: path, message: "cannot create a temporary file in \(dir): \(ErrorText.errno(code))")
            }
            return PendingFile(path: path, destination: destination, temporaryPath: tmp, registration: registration)
        }
    }

    /// Lets `produce` fill a temporary file (its path is passed) and puts it in place.
    public static func file<T>(at path: String, options: OutputOptions = .file,
                               _ produce: (String) throws -> T) throws -> T {
        let pending = try prepare(path, options: options, temporaryFile: true)
        guard let tmp = pending.temporaryPath else { preconditionFailure("asked for a temporary file") }
        let result: T
        do { result = try produce(tmp) } catch {
            pending.discard()
            throw error
        }
        try pending.commitTemporaryFile()
        return result
    }

    /// Why a file the user names as an output may not be `file`: one of the files of a drummer
    /// model or dataset directory (its weights, model.json, events.npy, …), which export and
    /// convert-midi write whole, one file replaced breaking it. nil: any other file.
    static func directoryOwning(_ file: String) -> String? {
        let name = (file as NSString).lastPathComponent, parent = parentDirectory(file)
        let subdirectory = (parent as NSString).lastPathComponent, grandparent = parentDirectory(parent)
        for (kind, what, writer) in [(DirectoryKind.model, "model", "export"), (DirectoryKind.dataset, "dataset", "convert-midi")] {
            func owned(by directory: String) -> String {
                "is a file of the \(what) directory \(directory), which \(writer) writes whole; write elsewhere"
            }
            if kind.owned.contains(name), kind.recognizes(parent) { return owned(by: parent) }
            // A file of one of its own subdirectories (a dataset's validation/).
            if kind.nestedOwned[subdirectory]?.contains(name) == true, kind.recognizes(grandparent) { return owned(by: grandparent) }
        }
        return nil
    }

    /// Where `path` leads, by the rules above; throws a sentence naming the path when
    /// the destination cannot be written.
    public static func resolve(_ path: String, options: OutputOptions = .file) throws -> OutputDestination {
        guard !path.isEmpty else { throw OutputError(path: "\"\"", message: "an output path must not be empty") }
        if path == "-" {
            guard options.standardOutput else {
                throw OutputError(path: "-", message: "this output cannot go to standard output; name a file")
            }
            return .descriptor(1)
        }
        var current = path
        var viaLink = false
        func refuse(_ message: String) -> OutputError {
            OutputError(path: viaLink ? "\(path) (a link to \(current))" : path, message: message)
        }
        for _ in 0..<40 {
            if let fd = descriptorNumber(current) {
                guard options.streams else {
                    throw refuse("is \(describeDescriptor(fd)); this output must be a regular file")
                }
                guard fcntl(fd, F_GETFD) != -1 else { throw refuse("descriptor \(fd) is not open") }
                return .descriptor(fd)
            }
            var st = stat()
            guard lstat(current, &st) == 0 else {
                let code = errno
                if code == ENOENT {
                    if viaLink, !isDirectory(parentDirectory(current)) {
                        throw refuse("its target's directory \(parentDirectory(current)) does not exist")
                    }
                    if options.streams, let owner = directoryOwning(current) { throw refuse(owner) }
                    return .file(path: current, existingMode: nil)
                }
                if code == ENOTDIR, let blocker = firstNonDirectoryAncestor(current) {
                    throw refuse("\(blocker) is not a directory")
                }
                throw refuse(ErrorText.errno(code))
            }
            switch st.st_mode & S_IFMT {
            case S_IFLNK:
                guard let target = readLink(current) else { throw refuse("cannot read the symbolic link: \(ErrorText.lastErrno)") }
                current = linkTarget(target, of: current)
                viaLink = true
            case S_IFREG:
                if options.streams, let owner = directoryOwning(current) { throw refuse(owner) }
                return .file(path: current, existingMode: UInt32(st.st_mode & 0o7777))
            case S_IFDIR:
                throw refuse("is a directory")
            case S_IFCHR, S_IFIFO:
                let what = st.st_mode & S_IFMT == S_IFIFO ? "a FIFO" : "a character device"
                guard options.streams else { throw refuse("is \(what); not replacing it with a regular file") }
                return .stream(path: current)
            case S_IFBLK:
                throw refuse("is a block device; drummer does not write to block devices")
            case S_IFSOCK:
                throw refuse("is a socket; a file cannot be written there")
            default:
                throw refuse("is not a regular file")
            }
        }
        throw refuse(ErrorText.errno(ELOOP))
    }

    // MARK: - Directories

    /// Creates a temporary directory beside `path`, lets `fill` write into it, then
    /// swaps it into place. On error the temporary directory is removed and `path`
    /// is untouched. An existing directory is replaced only when it is empty or
    /// `kind` recognises it.
    public static func directory<T>(at path: String, kind: DirectoryKind = .drummerOutput,
                                    _ fill: (URL) throws -> T) throws -> T {
        let pending = try prepareDirectory(at: path, kind: kind)
        let result: T
        do { result = try fill(pending.url) } catch {
            pending.discard()
            throw error
        }
        try pending.commit()
        return result
    }

    /// Checks the destination and creates the temporary directory (nothing at `path`
    /// changes until `commit`).
    public static func prepareDirectory(at path: String, kind: DirectoryKind = .drummerOutput) throws -> PendingDirectory {
        let (target, mode) = try resolveDirectory(path, kind: kind)
        let parent = parentDirectory(target)
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw OutputError(path: path, message: "cannot create its parent directory \(parent): \(ErrorText.describe(error))")
        }
        TemporaryFiles.sweepOnce(directory: parent)
        let tmp = (parent as NSString).appendingPathComponent(
            TemporaryFiles.temporaryName(for: (target as NSString).lastPathComponent))
        let registration: TemporaryFiles.Registration? = TemporaryFiles.withRegistryLocked { registry in
            mkdir(tmp, 0o777) == 0 ? registry.add(tmp, destination: path) : nil
        }
        guard let registration else {
            throw OutputError(path: path, message: "cannot create a directory in \(parent): \(ErrorText.lastErrno)")
        }
        return PendingDirectory(path: path, destination: target, url: URL(fileURLWithPath: tmp, isDirectory: true),
                                replacesMode: mode, registration: registration)
    }

    /// The directory `path` leads to (symbolic links followed) and the permission
    /// bits of the directory there, if any; refuses what may not be replaced.
    package static func resolveDirectory(_ path: String, kind: DirectoryKind = .drummerOutput) throws -> (path: String, mode: mode_t?) {
        guard !path.isEmpty else { throw OutputError(path: "\"\"", message: "an output directory must not be empty") }
        guard path != "-" else { throw OutputError(path: "-", message: "a directory cannot be written to standard output") }
        var current = path
        while current.count > 1, current.hasSuffix("/") { current.removeLast() }
        let last = (current as NSString).lastPathComponent
        if last == "." || last == "..", let real = realPath(current) { current = real }
        if current == "/" { throw OutputError(path: path, message: "is the root directory") }
        var viaLink = false
        func refuse(_ message: String) -> OutputError {
            OutputError(path: viaLink ? "\(path) (a link to \(current))" : path, message: message)
        }
        for _ in 0..<40 {
            var st = stat()
            guard lstat(current, &st) == 0 else {
                let code = errno
                if code == ENOENT {
                    if viaLink, !isDirectory(parentDirectory(current)) {
                        throw refuse("its target's directory \(parentDirectory(current)) does not exist")
                    }
                    return (current, nil)
                }
                if code == ENOTDIR, let blocker = firstNonDirectoryAncestor(current) {
                    throw refuse("\(blocker) is not a directory")
                }
                throw refuse(ErrorText.errno(code))
            }
            switch st.st_mode & S_IFMT {
            case S_IFLNK:
                guard let target = readLink(current) else { throw refuse("cannot read the symbolic link: \(ErrorText.lastErrno)") }
                current = linkTarget(target, of: current)
                while current.count > 1, current.hasSuffix("/") { current.removeLast() }
                viaLink = true
            case S_IFDIR:
                let entries: [String]
                do { entries = try FileManager.default.contentsOfDirectory(atPath: current) } catch {
                    throw refuse("cannot list it: \(ErrorText.describe(error))")
                }
                guard entries.isEmpty || kind.recognizes(current) else {
                    throw OutputError(path: path, message: "not replacing it: it is not empty and not \(kind.name)"
                        + "; remove it or choose another path")
                }
                let foreign = entries.isEmpty ? [] : kind.foreignEntries(in: current)
                guard foreign.isEmpty else {
                    let shown = foreign.prefix(5).joined(separator: ", ") + (foreign.count > 5 ? ", … (\(foreign.count) in all)" : "")
                    throw refuse("not replacing it: it also holds \(shown), which drummer does not write there; "
                        + "move \(foreign.count == 1 ? "it" : "them") out or choose another path")
                }
                // Its old files go once the new directory is in place: a directory whose files
                // cannot be removed (its own write permission, or a subdirectory's) would be
                // replaced and then left behind under a temporary name.
                // (An empty directory goes with its parent's permission alone.)
                func holdsFiles(_ dir: String) -> Bool {
                    var e = stat()
                    guard lstat(dir, &e) == 0, e.st_mode & S_IFMT == S_IFDIR else { return false }
                    return !((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).isEmpty
                }
                if let locked = ([current] + entries.map { (current as NSString).appendingPathComponent($0) })
                    .first(where: { holdsFiles($0) && access($0, W_OK | X_OK) != 0 }) {
                    throw refuse("not replacing it: \(locked == current ? "it" : locked) is read-only, so its old files "
                        + "could not be removed; make it writable (chmod -R u+w) or choose another path")
                }
                return (current, st.st_mode & 0o7777)
            default:
                throw refuse("exists and is not a directory (it is \(fileTypeName(st.st_mode)))")
            }
        }
        throw refuse(ErrorText.errno(ELOOP))
    }

    // MARK: - Helpers

    struct SystemCallError: Error {
        let what: String
        let code: Int32
    }

    /// The directory holding `path` ("." for a bare name).
    static func parentDirectory(_ path: String) -> String { PathNames.parent(of: path) }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    package static func fileTypeName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "a special file"
        }
    }

    package static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Where a link at `link` holding `target` points: relative targets are taken
    /// from the link's directory.
    static func linkTarget(_ target: String, of link: String) -> String {
        let parent = parentDirectory(link)
        if target.hasPrefix("/") || (parent == "." && !link.hasPrefix("./")) { return target }
        return (parent as NSString).appendingPathComponent(target)
    }

    static func realPath(_ path: String) -> String? {
        guard let r = realpath(path, nil) else { return nil }
        defer { free(r) }
        return String(cString: r)
    }

    /// The nearest ancestor of `path` that exists and is not a directory.
    static func firstNonDirectoryAncestor(_ path: String) -> String? {
        var p = parentDirectory(path)
        var candidates: [String] = []
        while p != "." && p != "/" && !p.isEmpty {
            candidates.append(p)
            p = parentDirectory(p)
        }
        for c in candidates.reversed() {
            var st = stat()
            if stat(c, &st) == 0, st.st_mode & S_IFMT != S_IFDIR { return c }
        }
        return nil
    }

    /// The descriptor a path names by itself: /dev/stdout, /dev/stderr, /dev/stdin,
    /// /dev/fd/N, /proc/self/fd/N, /proc/<this pid>/fd/N.
    static func descriptorNumber(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdin": return 0
        case "/dev/stdout": return 1
        case "/dev/stderr": return 2
        default: break
        }
        for prefix in ["/dev/fd/", "/proc/self/fd/", "/proc/\(getpid())/fd/"] where path.hasPrefix(prefix) {
            let rest = path.dropFirst(prefix.count)
            guard !rest.isEmpty, rest.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int32(rest)
        }
        return nil
    }

    static func describeDescriptor(_ fd: Int32) -> String {
        switch fd {
        case 0: return "standard input"
        case 1: return "standard output"
        case 2: return "standard error"
        default: return "descriptor \(fd)"
        }
    }

    /// Creates `path` exclusively and registers it, under the registry lock (so an
    /// interrupt never misses it). Returns the registration or the errno.
    static func createFile(_ path: String, destination: String) -> (TemporaryFiles.Registration?, Int32) {
        TemporaryFiles.withRegistryLocked { registry in
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            guard fd >= 0 else { return (nil, errno) }
            close(fd)
            return (registry.add(path, destination: destination), 0)
        }
    }

    static func withDescriptor(_ path: String, flags: Int32, _ body: (Int32) throws -> Void) throws {
        let fd = open(path, flags)
        guard fd >= 0 else { throw SystemCallError(what: "(open)", code: errno) }
        do { try body(fd) } catch {
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw SystemCallError(what: "(close)", code: errno) }
    }

    static func writeAll(_ data: Data, to fd: Int32) throws {
        try data.withUnsafeBytes { raw in
            guard var p = raw.baseAddress else { return }
            var left = raw.count
            while left > 0 {
                let n = posixWrite(fd, p, left)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw SystemCallError(what: "", code: errno)
                }
                p += n
                left -= n
            }
        }
    }

    /// Gives a finished temporary file the replaced file's permission bits and syncs it.
    static func finish(_ fd: Int32, mode: UInt32?) throws {
        if let mode, fchmod(fd, mode_t(mode)) != 0 { throw SystemCallError(what: "(chmod)", code: errno) }
        guard fsync(fd) == 0 else { throw SystemCallError(what: "(fsync)", code: errno) }
    }

    /// Writes into a character device, FIFO or open descriptor.
    static func writeThrough(_ data: Data, destination: OutputDestination, path: String) throws {
        // A reader that goes away is an error (EPIPE) to report, not a signal that kills.
        signal(SIGPIPE, SIG_IGN)
        do {
            switch destination {
            case .descriptor(let fd):
                fflush(nil)
                try writeAll(data, to: fd)
            case .stream(let target):
                try withDescriptor(target, flags: O_WRONLY | O_NOCTTY | O_CLOEXEC) { fd in
                    try writeAll(data, to: fd)
                }
            case .file:
                preconditionFailure("regular files are renamed into place")
            }
        } catch let e as SystemCallError {
            throw OutputError(path: path, message: "cannot write: \(ErrorText.errno(e.code))")
        }
    }

    /// fsync(2) of a directory, so a rename in it is durable. Best effort.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Files larger than this are not fsync'd before a directory is renamed into place.
    /// Syncing convert-midi's 1.8 GB X.npy doubled the conversion's time (3.7 s → 7.9 s),
    /// and the data can be made again; a power cut right after the rename could leave
    /// it short, which the .npy reader reports (its header gives the size).
    static let syncLimit = 64 << 20

    /// fsync(2) of every regular file up to `syncLimit` bytes and every directory
    /// under `root`. Best effort.
    static func syncTree(_ root: String) {
        let fm = FileManager.default
        var dirs = [root]
        while let dir = dirs.popLast() {
            for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] {
                let p = (dir as NSString).appendingPathComponent(name)
                var st = stat()
                guard lstat(p, &st) == 0 else { continue }
                if st.st_mode & S_IFMT == S_IFDIR {
                    dirs.append(p)
                } else if st.st_mode & S_IFMT == S_IFREG, st.st_size <= syncLimit {
                    let fd = open(p, O_RDONLY | O_CLOEXEC)
                    if fd >= 0 { fsync(fd); close(fd) }
                }
            }
            syncDirectory(dir)
        }
    }

    private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32

    /// glibc's renameat2 (2.28+; the Swift Glibc module does not declare it).
    private static let renameat2: RenameAt2? = {
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
        return unsafeBitCast(sym, to: RenameAt2.self)
    }()

    /// Swaps two existing paths atomically (RENAME_EXCHANGE); false where unsupported.
    static func exchange(_ a: String, _ b: String) -> Bool {
        guard let f = renameat2 else { return false }
        let RENAME_EXCHANGE: UInt32 = 2
        return f(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0
    }
}

// At file scope, where the methods named rename and write do not shadow them.
private func posixRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func posixWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }

/// JSON as the toolchain writes it: sorted keys, pretty-printed, trailing newline.
public enum JSONOutput {
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var d = try enc.encode(value)
        d.append(0x0A)
        return d
    }
}
