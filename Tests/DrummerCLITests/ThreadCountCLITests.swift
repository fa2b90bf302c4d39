import Foundation
import XCTest

/// OpenBLAS splits a product's sums by its thread count, which follows the machine's cores,
/// OPENBLAS_NUM_THREADS or a CPU affinity: a seed's initial weights and `eval`'s figures are the
/// same whatever it is (the initialisation's QR and the evaluations run OpenBLAS on one thread).
final class ThreadCountCLITests: XCTestCase {
    func testInitialWeightsAndEvalFiguresDoNotDependOnOpenBLASThreads() throws {
        let root = try CLI.temporaryDirectory("threads")
        defer { try? FileManager.default.removeItem(at: root) }
        // Six files of the corpus, converted as the shipped model reads them.
        let source = root.appendingPathComponent("midi")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        let session = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/session1")
        let files = try FileManager.default.contentsOfDirectory(atPath: session.path).filter { $0.hasSuffix("4-4.mid") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 6)
        for f in files.prefix(6) {
            try FileManager.default.copyItem(at: session.appendingPathComponent(f), to: source.appendingPathComponent(f))
        }
        let data = root.appendingPathComponent("data").path
        var r = try CLI.run(["convert-midi", source.path, "-o", data, "--quantize", "30", "--onset-order", "note"])
        XCTAssertEqual(r.status, 0, r.stderr)

        var weights: [Data] = [], figures: [String] = []
        for threads in ["1", "2"] {
            let run = root.appendingPathComponent("run-\(threads)").path, model = root.appendingPathComponent("model-\(threads)").path
            r = try CLI.run(["train", "--data", data, "--hidden", "64", "--steps", "1", "--checkpoint-dir", run],
                            environment: ["OPENBLAS_NUM_THREADS": threads])
            XCTAssertEqual(r.status, 0, r.stderr)
            r = try CLI.run(["export", run + "/ckpt-1.h5", "-o", model])
            XCTAssertEqual(r.status, 0, r.stderr)
            weights.append(try Data(contentsOf: URL(fileURLWithPath: model + "/Wx.bin")))
            let shipped = CLI.repoRoot.appendingPathComponent("models/groove").path
            r = try CLI.run(["eval", shipped, "--data", data, "--json"], environment: ["OPENBLAS_NUM_THREADS": threads])
            XCTAssertEqual(r.status, 0, r.stderr)
            figures.append(r.stdout)
        }
        XCTAssertEqual(weights[0], weights[1], "a seed's weights differ with OpenBLAS on 1 and on 2 threads")
        XCTAssertEqual(figures[0], figures[1])
        XCTAssertTrue(figures[0].contains("\"predicted\""), figures[0])
    }
}
