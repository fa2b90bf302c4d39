// Reproducers of checkpoint-directory failures, end to end with the built binary:
//   - two concurrent runs into one --checkpoint-dir: the second is refused (exit 1),
//     naming the first, which goes on and keeps its files;
//   - the disk filling up during a checkpoint write (a 200 KiB tmpfs): a one-line error,
//     exit 1, no signal, the earlier checkpoints intact and no temporary file left.
import Foundation
import XCTest

final class CheckpointDirectoryCLITests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("ckdir-cli")
        try TrainCLITests.writeDataset(root.appendingPathComponent("data"), count: 120)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func testConcurrentRunIsRefusedNamingTheRunningOne() throws {
        let ck = root.appendingPathComponent("c")
        let first = Process()
        first.executableURL = CLI.binary
        first.arguments = ["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "6", "--unroll", "8",
                           "--checkpoint-dir", ck.path, "--checkpoint-every", "50", "--log-every", "100000",
                           "--eval-every", "100000"]
        let outURL = root.appendingPathComponent("out.txt")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        first.standardOutput = out
        first.standardError = FileHandle.nullDevice
        first.standardInput = FileHandle.nullDevice
        try first.run()
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        // Wait for its first checkpoint: it owns the directory and holds its lock.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, first.isRunning,
              !((try? String(contentsOf: outURL, encoding: .utf8)) ?? "").contains("checkpoint ") {
            usleep(10_000)
        }
        let second = try CLI.run(["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "6",
                                  "--unroll", "8", "--checkpoint-dir", ck.path, "--steps", "5"])
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("--checkpoint-dir \(ck.path) is in use by another training run (pid \(first.processIdentifier), run "),
                      second.stderr)
        XCTAssertEqual(second.stderr.split(separator: "\n").count, 1, second.stderr)
        kill(first.processIdentifier, SIGINT)
        first.waitUntilExit()
        try out.close()
        XCTAssertEqual(first.terminationStatus, 0)
        // After it ended, a new run into its directory is refused as another run's.
        let third = try CLI.run(["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "6",
                                 "--unroll", "8", "--checkpoint-dir", ck.path, "--steps", "5"])
        XCTAssertEqual(third.status, 1, third.stderr)
        XCTAssertTrue(third.stderr.contains("holds another run's checkpoints"), third.stderr)
        XCTAssertTrue(third.stderr.contains("to continue that run: drummer train --resume \(ck.path)/ckpt-"), third.stderr)
        // With -o, the line to continue it keeps the -o (it was dropped), quoted for the shell.
        let model = root.appendingPathComponent("my model").path
        let withOutput = try CLI.run(["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "6",
                                      "--unroll", "8", "--checkpoint-dir", ck.path, "--steps", "5", "-o", model])
        XCTAssertEqual(withOutput.status, 1, withOutput.stderr)
        XCTAssertNotNil(withOutput.stderr.range(of: "to continue that run: drummer train --resume \(NSRegularExpression.escapedPattern(for: ck.path))/ckpt-[0-9]+\\.h5 -o "
                                                + NSRegularExpression.escapedPattern(for: "'\(model)'") + ";",
                                                options: .regularExpression), withOutput.stderr)
    }

    func testDiskFullDuringACheckpointIsOneLineAndKeepsEarlierCheckpoints() throws {
        let mnt = root.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: mnt, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=200k", "tmpfs", mnt.path]
        mount.standardOutput = FileHandle.nullDevice
        mount.standardError = FileHandle.nullDevice
        do { try mount.run() } catch { throw XCTSkip("cannot run mount: \(error)") }
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else {
            throw XCTSkip("cannot mount a 200 KiB tmpfs here (not root, or no CAP_SYS_ADMIN): the disk-full test needs one")
        }
        defer {
            let u = Process()
            u.executableURL = URL(fileURLWithPath: "/bin/umount")
            u.arguments = ["-l", mnt.path]
            try? u.run()
            u.waitUntilExit()
        }
        // A run whose first checkpoint does not fit (H = 200: about 3 MB) after its first
        // evaluation: its log row and run.json go with it, and the same directory takes the
        // next run (it was refused as another run's).
        let first = mnt.appendingPathComponent("first")
        func firstRun(hidden: Int) throws -> CLIResult {
            try CLI.run(["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "\(hidden)",
                         "--unroll", "8", "--checkpoint-dir", first.path, "--steps", "1", "--eval-every", "1"])
        }
        let failed = try firstRun(hidden: 200)
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertTrue(failed.stderr.contains("cannot write the checkpoint: no space left on device"), failed.stderr)
        XCTAssertTrue(failed.stdout.contains("note: no checkpoint was written; this run's train_log.csv and run.json in \(first.path) were removed"), failed.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: first.path), [])
        let again = try firstRun(hidden: 8)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: first.appendingPathComponent("ckpt-1.h5").path))
        // That run's checkpoint moved away and resumed into its directory on a full disk: the
        // resumed run fails at its first checkpoint, and the log and run.json it found stay.
        let moved = root.appendingPathComponent("ckpt-1.h5")
        try FileManager.default.moveItem(at: first.appendingPathComponent("ckpt-1.h5"), to: moved)
        let filler = mnt.appendingPathComponent("filler")
        XCTAssertTrue(FileManager.default.createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try? handle.close()
        let resumed = try CLI.run(["train", "--resume", moved.path, "--steps", "2", "--eval-every", "1", "--checkpoint-dir", first.path])
        XCTAssertEqual(resumed.status, 1, resumed.stderr)
        XCTAssertTrue(resumed.stderr.contains("no space left on device"), resumed.stderr)
        XCTAssertFalse(resumed.stdout.contains("were removed"), resumed.stdout)
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: first.path)), ["run.json", "train_log.csv"])
        try FileManager.default.removeItem(at: filler)
        try FileManager.default.removeItem(at: first)
        let ck = mnt.appendingPathComponent("ck")
        // H = 24: each checkpoint is about 60 KB, so the 200 KiB fill up after a few.
        let r = try CLI.run(["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "24", "--unroll", "8",
                             "--checkpoint-dir", ck.path, "--checkpoint-every", "1", "--keep", "1000", "--steps", "40",
                             "--log-every", "1000", "--eval-every", "1000"])
        XCTAssertEqual(r.status, 1, "exit \(r.status): \(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("cannot write the checkpoint: no space left on device"), r.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: ck.path)
        XCTAssertFalse(names.contains { $0.contains(".tmp-") || $0.contains("drummer-tmp") }, "temporaries left: \(names)")
        let saved = names.filter { $0.hasPrefix("ckpt-") && $0.hasSuffix(".h5") }.sorted()
        XCTAssertFalse(saved.isEmpty, "some checkpoints fit before the disk filled")
        // Every checkpoint left is whole: it exports.
        for name in saved {
            let e = try CLI.run(["export", ck.appendingPathComponent(name).path, "-o", root.appendingPathComponent("m-\(name)").path])
            XCTAssertEqual(e.status, 0, "\(name): \(e.stderr)")
        }
    }
}

/// Every size flag is checked before anything is allocated: a clear message and
/// exit 64 (usage) or 1 (the memory a valid size would need), never a trap or an abort.
final class SizeLimitCLITests: XCTestCase {
    func testHugeSizesAreRefusedBeforeAllocating() throws {
        let root = try CLI.temporaryDirectory("sizes")
        defer { try? FileManager.default.removeItem(at: root) }
        try TrainCLITests.writeDataset(root.appendingPathComponent("data"), count: 120)
        let data = root.appendingPathComponent("data").path
        let ck = root.appendingPathComponent("c").path
        let cases: [([String], Int32, String)] = [
            (["train", "--recipe", "original", "--data", data, "--checkpoint-dir", ck, "--hidden", "100000"], 64, "--hidden must be between 1 and 4096, got 100000"),
            (["train", "--recipe", "original", "--data", data, "--checkpoint-dir", ck, "--hidden", "99999999999"], 64, "--hidden must be between 1 and 4096, got 99999999999"),
            (["train", "--recipe", "original", "--data", data, "--checkpoint-dir", ck, "--hidden", "16385"], 64, "--hidden must be between 1 and 4096, got 16385"),
            (["train", "--recipe", "original", "--data", data, "--checkpoint-dir", ck, "--batch-size", "99999999999"], 64, "--batch-size must be between 1 and 65536, got 99999999999"),
            (["train", "--recipe", "original", "--data", data, "--checkpoint-dir", ck, "--unroll", "99999999999"], 64, "--unroll must be between 1 and 100000, got 99999999999"),
            (["train", "--recipe", "original", "--data", data, "--checkpoint-dir", ck, "--hidden", "4096", "--unroll", "100000", "--batch-size", "65536"], 1,
             "--hidden/--unroll/--batch-size 4096/100000/65536 need 800417 GiB of training memory, more than the"),
            (["bench", "train", "--events", "99999999999"], 64, "--events must be between 2 and 10000000, got 99999999999"),
            (["bench", "train", "--hidden", "99999999999"], 64, "--hidden must be between 1 and 4096"),
            (["bench", "train", "--batch", "99999999999"], 64, "--batch 99999999999 must be between 1 and --events 52260"),
            (["bench", "sample", "--notes", "99999999999"], 64, "--notes must be between 1 and 10000000, got 99999999999"),
            (["bench", "sample", "--hidden", "99999999999"], 64, "--hidden must be between 1 and 4096"),
            (["sample", CLI.repoRoot.appendingPathComponent("models/groove").path, "-n", "99999999999"], 64, "-n must be between 1 and 10000000"),
        ]
        for (args, status, message) in cases {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, status, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("Fatal error"), "\(args): \(r.stderr)")
        }
        // A size that is valid but needs more memory than this machine's limit is refused
        // with the figure, before any allocation (exit 1, not a crash).
        let big = try CLI.run(["train", "--recipe", "original", "--data", data, "--checkpoint-dir", ck, "--hidden", "4096", "--unroll", "20000", "--batch-size", "64"])
        XCTAssertEqual(big.status, 1, big.stderr)
        XCTAssertTrue(big.stderr.contains("of training memory, more than the"), big.stderr)
    }
}
