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
            guard name.hasPrefix("ckpt-"), name.hasSuffix(".h5") else { return nil }
            guard let step = Int(name.dropFirst(5).dropLast(3)), step >= 0 else { return nil }
            return (step, (path as NSString).appendingPathComponent(name))
        }.sorted { $0.0 < $1.0 }
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
        } catch {
            throw OwnershipError.unreadable(path: file, reason: ErrorText.describe(error))
        }
    }

    /// Makes the directory this run's, before any training: creates it, checks it is writable,
    /// takes the lock (held by the returned `RunLock` until it is released or the process
    /// ends) and records the run in run.json. `resumingFrom`, a checkpoint path, lets a
    /// directory holding version 1 checkpoints (which have no run id) be adopted by the run
    /// that continues one of them.
    package func claim(runID: String, resumingFrom: String? = nil) throws -> RunLock {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw OwnershipError.notADirectory(path: path)
        }
        do {
            try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw OwnershipError.notWritable(path: path, reason: ErrorText.describe(error))
        }
        try checkWritable()
        let lock = try RunLock(path: child(Self.lockFileName), runID: runID)
        if let record = try owner() {
            guard record.runID == runID else {
                throw OwnershipError.otherRun(path: path, runID: record.runID, latest: list().last?.path)
            }
        } else {
            let checkpoints = list()
            let hasLog = fm.fileExists(atPath: child(Self.logFileName))
            let adopting = resumingFrom.map { standardized($0).hasPrefix(standardized(path) + "/") } ?? false
            if (!checkpoints.isEmpty || hasLog) && !adopting {
                throw OwnershipError.unclaimedFiles(path: path, latest: checkpoints.last?.path, log: hasLog)
            }
            let record = RunRecord(format: RunRecord.formatName, runID: runID, createdBy: "drummer \(DrummerVersion.string)")
            do {
                try AtomicOutput.write(try JSONOutput.encode(record), to: child(Self.runFileName))
            } catch {
                throw OwnershipError.notWritable(path: path, reason: ErrorText.describe(error))
            }
        }
        return lock
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
/// pid and run id of the run (released when this object goes away or the process ends,
/// killed or not). One owning object per file descriptor.
public final class RunLock: @unchecked Sendable {
    public let path: String
    public let runID: String
    private var fd: Int32 = -1

    init(path: String, runID: String) throws {
        self.path = path
        self.runID = runID
        try acquire()
    }

    deinit { release() }

    /// Takes the lock again after `release` (no-op while held). The lock file stays in the
    /// directory after release: removing it could let two runs lock two different files.
    package func acquire() throws {
        guard fd < 0 else { return }
        let dir = (path as NSString).deletingLastPathComponent
        let f = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard f >= 0 else { throw OwnershipError.notWritable(path: dir, reason: ErrorText.errno(errno)) }
        guard flock(f, LOCK_EX | LOCK_NB) == 0 else {
            let holder = RunLock.describeHolder(fd: f)
            Glibc.close(f)
            throw OwnershipError.locked(path: dir, holder: holder)
        }
        let text = Array("pid \(getpid())\nrun \(runID)\n".utf8)
        _ = ftruncate(f, 0)
        _ = text.withUnsafeBytes { pwrite(f, $0.baseAddress, $0.count, 0) }
        fd = f
    }

    /// Unlocks (idempotent).
    public func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        Glibc.close(fd)
        fd = -1
    }

    static func describeHolder(fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return "another process" }
        let text = String(decoding: buffer.prefix(n), as: UTF8.self)
        var pid = "?", run = "?"
        for line in text.split(separator: "\n") {
            if line.hasPrefix("pid ") { pid = String(line.dropFirst(4)) }
            if line.hasPrefix("run ") { run = String(line.dropFirst(4)) }
        }
        return "pid \(pid), run \(run)"
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
    case otherRun(path: String, runID: String, latest: String?)
    /// Checkpoints or a log without run.json (written by an older drummer, or by hand).
    case unclaimedFiles(path: String, latest: String?, log: Bool)

    public var description: String {
        switch self {
        case .notADirectory(let p):
            return "--checkpoint-dir \(p): exists and is not a directory"
        case .notWritable(let p, let r):
            return "--checkpoint-dir \(p): cannot write there: \(r)"
        case .unreadable(let p, let r):
            return "\(p): cannot read the run record: \(r)"
        case .locked(let p, let holder):
            return "--checkpoint-dir \(p) is in use by another training run (\(holder)); one run per checkpoint directory: "
                + "wait for it, or choose another --checkpoint-dir"
        case .otherRun(let p, let id, let latest):
            let resume = latest.map { "; to continue that run: drummer train --resume \($0)" } ?? ""
            return "--checkpoint-dir \(p) holds another run's checkpoints (run \(id))\(resume); "
                + "to start a new run, choose another --checkpoint-dir"
        case .unclaimedFiles(let p, let latest, let log):
            var what = latest.map { "checkpoints (the latest \($0))" } ?? ""
            if log { what += (what.isEmpty ? "" : " and ") + CheckpointDirectory.logFileName }
            let resume = latest.map { "; to continue that run: drummer train --resume \($0)" } ?? ""
            return "--checkpoint-dir \(p) already holds \(what) of an earlier run\(resume); "
                + "to start a new run, choose another --checkpoint-dir"
        }
    }
}
