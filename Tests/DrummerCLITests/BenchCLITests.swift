import XCTest

/// `drummer bench train` runs every mode it offers in one call, on the 2017 layout (tiny sizes:
/// this checks that the benchmark runs and reports, not its speed).
final class BenchCLITests: XCTestCase {
    func testBenchTrainRunsEveryModeInOneCall() throws {
        let modes = ["helper", "helper-openblas", "blas1", "blas2", "loop", "loop-snapshot"]
        let r = try CLI.run(["bench", "train", "--unroll", "5", "--hidden", "8", "--events", "400", "--batch", "1", "2",
                             "--runs", "1", "--seconds", "0.01", "--layouts", "original",
                             "--modes"] + modes)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        // One layout: "batch B MODE median N timesteps/s …", no layout column.
        func measured(_ batch: Int, _ mode: String) -> Bool {
            lines.contains { l in
                let f = l.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                return f.count > 4 && f[0] == "batch" && f[1] == String(batch) && f[2] == mode && f[3] == "median" && (Int(f[4]) ?? 0) > 0
            }
        }
        // helper-openblas is measured only where the AVX-512 kernel would otherwise run.
        let avx512 = lines.contains { $0.contains("recurrent: avx512") }
        for b in [1, 2] {
            for mode in modes where mode != "helper-openblas" || avx512 {
                XCTAssertTrue(measured(b, mode), "batch \(b) \(mode) missing:\n\(r.stdout)")
            }
        }
        XCTAssertTrue(lines.contains { $0.hasPrefix("evaluation (") && $0.contains("original layout") }, r.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("float32 FMA peak") }, r.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("peak RSS: ") }, r.stdout)
    }

    /// `drummer bench sample --model` times a model directory (the shipped grid model) with its
    /// own sizes, and refuses sizes given beside it.
    func testBenchSampleTimesAGivenModel() throws {
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let r = try CLI.run(["bench", "sample", "--model", model, "--notes", "50", "--runs", "1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("model: \(model) (grid layout, 2 layer(s) of H=256, I=1218, O=710); 50 hits per generation"), r.stdout)
        XCTAssertTrue(r.stdout.split(separator: "\n").contains { $0.hasPrefix("threads=1  median") && $0.hasSuffix("ms per 50 notes") }, r.stdout)
        // Any size beside --model is refused, its default value included.
        for size in [["--hidden", "16"], ["--hidden", "200"], ["--note-classes", "17"]] {
            let bad = try CLI.run(["bench", "sample", "--model", model] + size)
            XCTAssertEqual(bad.status, 64, "\(size)")
            XCTAssertTrue(bad.stderr.contains("--model takes its sizes and groups from the model"), bad.stderr)
        }
    }
}
