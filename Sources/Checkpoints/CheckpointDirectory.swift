// A checkpoint directory belongs to one training run: `ckpt-<step>.h5` files, the run's
// `train_log.csv`, `run.json` naming the run that owns the directory, and a lock file held
// (flock) while that run trains. A second run is refused, naming the other run, unless it
// continues the same run (`--resume` of one of its checkpoints); pruning to `--keep` then
// only ever sees the run's own files, and the log holds one run's rows.
import DrummerCore
import Foundation
import FileOutput
#if canImport(Glibc)
import Glibc
#endif

public struct CheckpointDirectory: Sendable {
    public let path: String

    static let runFileName = "run.json"
    static let lockFileName = ".drummer-train.lock"
    /// The log of evaluations beside the checkpoints (written by Train's TrainLog).
    static let logFileName = "train_log.csv"

    public init(path: String) { self.path = path }

    /// `<dir>/ckpt-<step>.h5`.
    public func file(step: Int) -> String { (path as NSString).appendingPathComponent("ckpt-\(step).h5") }

    func child(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// The checkpoints present, by step.
    public func list() -> [(step: Int, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.compactMap { name -> (Int, String)? in
            Self.step(ofFileName: name).map { ($0, (path as NSString).appendingPathComponent(name)) }
        }.sorted { $0.0 < $1.0 }
    }

    /// The step a checkpoint's file name says (`ckpt-<step>.h5`); nil for any other name.
    public static func step(ofFileName name: String) -> Int? {
        guard name.hasPrefix("ckpt-"), name.hasSuffix(".h5"), let step = Int(name.dropFirst(5).dropLast(3)), step >= 0 else {
            return nil
        }
        return step
    }

    /// Removes all but the last `keep` checkpoints, never removing the steps in
    /// `protect` (the best by validation loss). Returns the removed paths.
    @discardableResult
    public func prune(keep: Int, protect: Set<Int>) -> [String] {
        let all = list()
        guard all.count > keep else { return [] }
        var removed: [String] = []
        for (step, file) in all.dropLast(keep) where !protect.contains(step) {
            if (try? FileManager.default.removeItem(atPath: file)) != nil { removed.append(file) }
        }
        return removed
    }

    // MARK: ownership

    /// `run.json`: which run owns the directory.
    public struct RunRecord: Codable, Equatable, Sendable {
        public var format: String
        public var runID: String
        public var createdBy: String

        enum CodingKeys: String, CodingKey {
            case format
            case runID = "run_id"
            case createdBy = "created_by"
        }

        package static let formatName = "drummer-run"
    }

    /// The run that owns the directory, from run.json (nil when there is none).
    public func owner() throws -> RunRecord? {
        let file = child(Self.runFileName)
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        do {
            let record = try JSONDecoder().decode(RunRecord.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
            guard record.format == RunRecord.formatName, Checkpoint.isValidRunID(record.runID) else {
                throw OwnershipError.unreadable(path: file, reason: "not a drummer run record")
            }
            return record
        } catch let e as OwnershipError {
            throw e
        } catch is DecodingError {
            // Valid JSON or not, it is not what a run writes; the decoder's coding path says nothing to a user.
            throw OwnershipError.unreadable(path: file, reason: "not a drummer run record (a JSON object with format \"\(RunRecord.formatName)\" and a run_id)")
        } catch {
            throw OwnershipError.unreadable(path: file, reason: ErrorText.describe(error))
        }
    }

    /// Makes the directory this run's, before any training: creates it, checks it is writable,
    /// takes the lock (held by the returned `RunLock` until it is released or the process
    /// ends) and records the run in run.json. `resumingFrom`, a checkpoint path, lets a
    /// directory holding version 1 checkpoints (which have no run id) be adopted by the run
    /// that continues one of them.
    /// `resumeFlags`: what the refusal's `drummer train --resume` line adds (the refused command's
    /// `-o MODEL`, shell-quoted: where the user asked this run's model to go).
    package func claim(runID: String, resumingFrom: String? = nil, resumeFlags: String = "") throws -> RunLock {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw OwnershipError.notADirectory(path: path)
        }
        do {
            try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            // A symbolic link on the way that leads nowhere: Foundation says "already exists".
            var prefix = path
            while !prefix.isEmpty, prefix != "/", prefix != "." {
                var st = stat()
                if lstat(prefix, &st) == 0, st.st_mode & S_IFMT == S_IFLNK, stat(prefix, &st) != 0,
                   let target = try? fm.destinationOfSymbolicLink(atPath: prefix) {
                    throw OwnershipError.notWritable(path: path, reason: "\(prefix) is a symbolic link to \(target), which does not exist")
                }
                prefix = PathNames.parent(of: prefix)
            }
            throw OwnershipError.notWritable(path: path, reason: ErrorText.describe(error))
        }
        try checkWritable()
        let lock = try RunLock(path: child(Self.lockFileName), runID: runID)
        let record = try owner()
        if record?.runID == runID { return lock }  // this run's directory already
        let checkpoints = list()
        let hasLog = fm.fileExists(atPath: child(Self.logFileName))
        if let record {
            // Another run's: refused when that run left anything to protect; a run stopped
            // before its first checkpoint and its first evaluation left only its claim.
            guard checkpoints.isEmpty, !hasLog else {
                throw OwnershipError.otherRun(path: path, runID: record.runID, latest: checkpoints.last?.path, flags: resumeFlags)
            }
            lock.replacedRun = "\(path) held only the claim of run \(record.runID), which wrote no checkpoint and no "
                + "evaluation: this run takes the directory over"
        } else {
            let adopting = resumingFrom.map { standardized($0).hasPrefix(standardized(path) + "/") } ?? false
            if (!checkpoints.isEmpty || hasLog) && !adopting {
                throw OwnershipError.unclaimedFiles(path: path, latest: checkpoints.last?.path, log: hasLog, flags: resumeFlags)
            }
        }
        let mine = RunRecord(format: RunRecord.formatName, runID: runID, createdBy: "drummer \(DrummerVersion.string)")
        do {
            try AtomicOutput.write(try JSONOutput.encode(mine), to: child(Self.runFileName))
        } catch {
            throw OwnershipError.notWritable(path: path, reason: ErrorText.describe(error))
        }
        lock.claimedEmpty = checkpoints.isEmpty && !hasLog
        return lock
    }

    /// For a run that fails before writing a checkpoint: when `lock` claimed the directory
    /// holding no checkpoint and no log (so run.json and train_log.csv are this run's alone),
    /// it still holds no checkpoint, and its run.json is the lock's run's, removes that record
    /// and train_log.csv (rows of a run that left nothing to resume), so that the directory is
    /// free for the same command again; returns whether it did.
    package func forgetRunWithoutCheckpoints(lock: RunLock) -> Bool {
        guard lock.claimedEmpty, list().isEmpty, (try? owner())??.runID == lock.runID else { return false }
        let fm = FileManager.default
        try? fm.removeItem(atPath: child(Self.logFileName))
        try? fm.removeItem(atPath: child(Self.runFileName))
        return !fm.fileExists(atPath: child(Self.runFileName))
    }

    /// Creates and removes a file in the directory: a checkpoint directory that cannot be
    /// written is found before training starts, not at the first save.
    func checkWritable() throws {
        let probe = child(".drummer-write-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fd = Glibc.open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw OwnershipError.notWritable(path: path, reason: ErrorText.errno(errno)) }
        Glibc.close(fd)
        unlink(probe)
    }

    private func standardized(_ p: String) -> String { URL(fileURLWithPath: p).standardizedFileURL.path }
}

/// The lock of a checkpoint directory while a run trains: an flock'd file holding the
/// pid, process start time and run id of the run. The kernel drops an flock when its process
/// ends, killed or not, so whether a lock is held is never guessed from the file; the file
/// says who held it. A run that releases the lock removes the file (while still holding the
/// flock), so a file found unlocked was left by a run that was killed: it is taken over and
/// `takeover` says whose it was. One owning object per file descriptor.
public final class RunLock: @unchecked Sendable {
    public let path: String
    public let runID: String
    private var fd: Int32 = -1
    /// "took over the lock left by …" when the last acquire found a killed run's lock file.
    public private(set) var takeover: String?
    /// Set by `claim` when the directory held only another run's run.json.
    public package(set) var replacedRun: String?
    /// Set by `claim` when it wrote run.json into a directory with no checkpoint and no
    /// train_log.csv: whatever of those the directory holds later is this run's.
    public package(set) var claimedEmpty = false

    init(path: String, runID: String) throws {
        self.path = path
        self.runID = runID
        try acquire()
    }

    deinit { release() }

    /// Takes the lock again after `release` (no-op while held).
    package func acquire() throws {
        guard fd < 0 else { return }
        let dir = PathNames.parent(of: path)
        // Another run may remove the file between our open and flock (it releases): then we
        // hold a lock on a file no longer in the directory, and try again with a new one.
        for _ in 0..<100 {
            let f = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard f >= 0 else { throw OwnershipError.notWritable(path: dir, reason: ErrorText.errno(errno)) }
            guard flock(f, LOCK_EX | LOCK_NB) == 0 else {
                let holder = RunLock.describeHolder(fd: f)
                Glibc.close(f)
                throw OwnershipError.locked(path: dir, holder: holder)
            }
            var mine = stat(), named = stat()
            guard fstat(f, &mine) == 0, stat(path, &named) == 0, mine.st_ino == named.st_ino, mine.st_dev == named.st_dev else {
                Glibc.close(f)
                continue
            }
            takeover = RunLock.leftBehind(fd: f).map { "took over the lock of \(dir) left by \($0)" }
            let text = Array("pid \(getpid())\nstart \(RunLock.startTime(pid: getpid()) ?? "?")\nrun \(runID)\n".utf8)
            _ = ftruncate(f, 0)
            _ = text.withUnsafeBytes { pwrite(f, $0.baseAddress, $0.count, 0) }
            fd = f
            return
        }
        throw OwnershipError.notWritable(path: dir, reason: "the lock file \(path) keeps being replaced")
    }

    /// Removes the lock file and unlocks (idempotent).
    public func release() {
        guard fd >= 0 else { return }
        unlink(path)
        flock(fd, LOCK_UN)
        Glibc.close(fd)
        fd = -1
    }

    /// The holder a lock file names: (pid, start time, run id), each nil when absent.
    static func holder(fd: Int32) -> (pid: String?, start: String?, run: String?)? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        var pid: String?, start: String?, run: String?
        for line in String(decoding: buffer.prefix(n), as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("pid ") { pid = String(line.dropFirst(4)) }
            if line.hasPrefix("start ") { start = String(line.dropFirst(6)) }
            if line.hasPrefix("run ") { run = String(line.dropFirst(4)) }
        }
        return (pid, start, run)
    }

    static func describeHolder(fd: Int32) -> String {
        guard let h = holder(fd: fd) else { return "another process" }
        return "pid \(h.pid ?? "?"), run \(h.run ?? "?")"
    }

    /// For a lock file found unlocked: "run R (pid P, which is no longer running)", or nil
    /// when the file is empty (just created). A pid now used by another process (its start
    /// time differs from the one recorded) counts as gone.
    static func leftBehind(fd: Int32) -> String? {
        guard let h = holder(fd: fd) else { return nil }
        var state = "no longer running"
        if let p = h.pid, let pid = Int32(p), let now = startTime(pid: pid), now == h.start {
            state = "still running but no longer holding it"
        }
        return "run \(h.run ?? "?") (pid \(h.pid ?? "?"), \(state))"
    }

    /// A process's start time in clock ticks since boot (/proc/PID/stat field 22), nil when
    /// there is no such process.
    static func startTime(pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces) start at field 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }
}

/// Why a run cannot use a checkpoint directory; each names the directory.
public enum OwnershipError: Error, CustomStringConvertible, Equatable, Sendable {
    case notADirectory(path: String)
    case notWritable(path: String, reason: String)
    case unreadable(path: String, reason: String)
    /// Another process holds the lock.
    case locked(path: String, holder: String)
    /// run.json names another run.
    case otherRun(path: String, runID: String, latest: String?, flags: String = "")
    /// Checkpoints or a log without run.json (written by an older drummer, or by hand).
    case unclaimedFiles(path: String, latest: String?, log: Bool, flags: String = "")

    public var description: String {
        switch self {
        case .notADirectory(let p):
            return "--checkpoint-dir \(p): exists and is not a directory"
        case .notWritable(let p, let r):
            return "--checkpoint-dir \(p): cannot write there: \(r)"
        case .unreadable(let p, let r):
            return "\(p): cannot read the run record: \(r); move it away or choose another --checkpoint-dir"
        case .locked(let p, let holder):
            return "--checkpoint-dir \(p) is in use by another training run (\(holder)); one run per checkpoint directory: "
                + "wait for it, or choose another --checkpoint-dir"
        case .otherRun(let p, let id, let latest, let flags):
            guard let latest else {
                // A run stopped after an evaluation, before its first checkpoint: its log alone.
                return "--checkpoint-dir \(p) holds another run's \(CheckpointDirectory.logFileName) (run \(id)) and no "
                    + "checkpoint, so nothing to resume; to start a new run, remove that file or choose another --checkpoint-dir"
            }
            return "--checkpoint-dir \(p) holds another run's checkpoints (run \(id)); to continue that run: "
                + "drummer train --resume \(ShellWords.quoted(latest))\(flags); to start a new run, choose another --checkpoint-dir"
        case .unclaimedFiles(let p, let latest, let log, let flags):
            var what = latest.map { "checkpoints (the latest \($0))" } ?? ""
            if log { what += (what.isEmpty ? "" : " and ") + CheckpointDirectory.logFileName }
            let resume = latest.map { "; to continue that run: drummer train --resume \(ShellWords.quoted($0))\(flags)" } ?? ""
            return "--checkpoint-dir \(p) already holds \(what) of an earlier run\(resume); "
                + "to start a new run, choose another --checkpoint-dir"
        }
    }
}

extension CommandInput {
    /// A checkpoint directory as a command's input: an output may go inside it under a name
    /// that is not the directory's own (its checkpoints, log, run record, lock, or a temporary).
    public static func checkpointDirectory(_ path: String) -> CommandInput {
        CommandInput(path, role: "the checkpoint directory", ownsName: { name in
            name.hasPrefix(".") || [CheckpointDirectory.runFileName, CheckpointDirectory.logFileName].contains(name)
                || (name.hasPrefix("ckpt-") && name.hasSuffix(".h5"))
        })
    }

    /// The checkpoint directory a checkpoint file lies in (the file named `ckpt-<step>.h5`, or
    /// beside its run's record) as an input too: its own files are no outputs, whether the
    /// command was given the directory or one of its checkpoints. nil: no such directory.
    public static func checkpointDirectory(holding file: String) -> CommandInput? {
        let parent = PathNames.parent(of: file)
        let inRun = CheckpointDirectory.step(ofFileName: (file as NSString).lastPathComponent) != nil
            || FileManager.default.fileExists(atPath: (parent as NSString).appendingPathComponent(CheckpointDirectory.runFileName))
        return inRun ? .checkpointDirectory(parent) : nil
    }
}
