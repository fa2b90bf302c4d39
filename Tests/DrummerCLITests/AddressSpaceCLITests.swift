import Foundation
import XCTest

/// Under a `ulimit -v` too small for OpenBLAS's and the threads' reservations, a command is
/// refused at once with what to raise, rather than crashing on a failed allocation or hanging
/// in OpenBLAS; nothing is written.
final class AddressSpaceCLITests: XCTestCase {
    func testASmallAddressSpaceLimitIsRefusedAtOnce() throws {
        let root = try CLI.temporaryDirectory("ulimit")
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("x.mid").path
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let sh = URL(fileURLWithPath: "/bin/sh")
        let r = try CLI.run(executable: sh, ["-c", "ulimit -v 600000 && exec \"$0\" sample \"$1\" -n 100 -o \"$2\"",
                                             CLI.binary.path, model, out])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderr, "error: the address-space limit (ulimit -v) is 585 MiB; drummer needs at least 1.0 GiB of "
                       + "address space (OpenBLAS and every thread reserve theirs whole): raise it with ulimit -v\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path), [])
        // Above the floor the same command runs.
        let ok = try CLI.run(executable: sh, ["-c", "ulimit -v 1300000 && exec \"$0\" sample \"$1\" -n 100 -o \"$2\"",
                                              CLI.binary.path, model, out])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
    }

    /// A training run the address-space limit cannot hold (its checkpoint's writing would fail
    /// an allocation: a crash, or the training lost after it ran) is refused before it starts,
    /// with what to raise; a small model under the same limit trains.
    func testATrainingRunTheLimitCannotHoldIsRefusedAtOnce() throws {
        let root = try CLI.temporaryDirectory("ulimit-train")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data").path
        let c = try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path, "-o", data,
                             "--quantize", "30", "--onset-order", "note"])
        XCTAssertEqual(c.status, 0, c.stderr)
        let sh = URL(fileURLWithPath: "/bin/sh")
        func train(hidden: Int, _ dir: String) throws -> CLIResult {
            try CLI.run(executable: sh, ["-c", "ulimit -v 1500000 && exec \"$0\" train --data \"$1\" --hidden \(hidden) --steps 2 --checkpoint-dir \"$2\"",
                                         CLI.binary.path, data, root.appendingPathComponent(dir).path])
        }
        let big = try train(hidden: 1024, "big")
        XCTAssertEqual(big.status, 1, big.stderr)
        XCTAssertTrue(big.stderr.contains("--hidden/--unroll/--batch-size 1024/64/"), big.stderr)
        XCTAssertTrue(big.stderr.contains(" (while writing a checkpoint) need "), big.stderr)
        XCTAssertEqual(big.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count, 1, big.stderr)
        XCTAssertTrue(big.stderr.contains(" MiB of address space, more than the "), big.stderr)
        XCTAssertTrue(big.stderr.contains(" MiB the address-space limit (ulimit -v 1500000) leaves beside the libraries, the data and the threads: raise it to ulimit -v "), big.stderr)
        // The figures add up: the advised limit leaves what the run needs.
        let words = big.stderr.split(separator: " ")
        let need = try XCTUnwrap(words.firstIndex(of: "need").flatMap { Int(words[$0 + 1]) })
        let left = try XCTUnwrap(words.firstIndex(of: "than").flatMap { Int(words[$0 + 2]) })
        let advised = try XCTUnwrap(words.lastIndex(of: "-v").flatMap { Int(words[$0 + 1]) })
        XCTAssertGreaterThan(need, left)
        // (One malloc arena, 64 MiB, more than the difference, what is mapped varying by one; the
        // MiB figures are rounded.)
        XCTAssertGreaterThanOrEqual(advised, 1_500_000 + (need - left + 62) * 1024)
        XCTAssertLessThanOrEqual(advised, 1_500_000 + (need - left + 66) * 1024)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("big").path))
        let small = try train(hidden: 32, "small")
        XCTAssertEqual(small.status, 0, small.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("small/ckpt-2.h5").path))
    }

    /// A model too large for the address-space limit is refused before it is read, by every
    /// command that reads one (here a model directory whose Wx.bin is a 600 MB sparse file:
    /// the check goes by the files' sizes); a model that large hung sample (OpenBLAS retrying a
    /// buffer for ever) and crashed export. Nothing is written.
    func testAModelTooLargeForTheLimitIsRefusedBeforeItIsRead() throws {
        let root = try CLI.temporaryDirectory("ulimit-model")
        defer { try? FileManager.default.removeItem(at: root) }
        let model = root.appendingPathComponent("big")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLI.repoRoot.appendingPathComponent("models/groove/model.json"),
                                         to: model.appendingPathComponent("model.json"))
        for name in ["Wx.bin", "Wx1.bin", "Wy.bin"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: model.appendingPathComponent(name).path, contents: nil))
        }
        let wx = try FileHandle(forWritingTo: model.appendingPathComponent("Wx.bin"))
        try wx.truncate(atOffset: 600_000_000)
        try wx.close()
        let out = root.appendingPathComponent("out").path
        let sh = URL(fileURLWithPath: "/bin/sh")
        for args in [["sample", model.path, "-n", "10", "-o", out + ".mid"], ["export", model.path, "--format", "safetensors", "-o", out + ".safetensors"],
                     ["eval", model.path, "--data", CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path]] {
            let r = try CLI.run(executable: sh, ["-c", "ulimit -v 1100000 && exec \"$0\" \"$@\"", CLI.binary.path] + args)
            XCTAssertEqual(r.status, 1, "\(args[0]): \(r.stderr)")
            // 3 × the weights' 600 MB (1,717 MiB) and 576 MiB for the rest, whatever is mapped.
            XCTAssertEqual(r.stderr, "error: \(model.path): reading this model would need 2293 MiB of address space (1717 MiB for the model, "
                           + "576 MiB for drummer's libraries and threads), more than the address-space limit (ulimit -v 1100000): "
                           + "raise it to ulimit -v 2348032 or more\n", args[0])
        }
        // At the advised limit the model is read (and found to be no model: its weights are zeros of the wrong size).
        let read = try CLI.run(executable: sh, ["-c", "ulimit -v 2348032 && exec \"$0\" \"$@\"", CLI.binary.path, "sample", model.path, "-n", "10", "-o", out + ".mid"])
        XCTAssertEqual(read.status, 1, read.stderr)
        XCTAssertFalse(read.stderr.contains("address space"), read.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path), ["big"])
    }
}
