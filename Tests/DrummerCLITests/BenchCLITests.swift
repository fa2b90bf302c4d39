import CKernels
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
        // helper-openblas is measured only where the kernels' own product would otherwise run.
        let own = lines.contains { $0.contains("recurrent: avx512") || $0.contains("recurrent: avx2") }
        for b in [1, 2] {
            for mode in modes where mode != "helper-openblas" || own {
                XCTAssertTrue(measured(b, mode), "batch \(b) \(mode) missing:\n\(r.stdout)")
            }
        }
        XCTAssertTrue(lines.contains { $0.hasPrefix("evaluation (") && $0.contains("original layout") }, r.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("float32 FMA peak") }, r.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("peak RSS: ") }, r.stdout)
    }

    /// DRUMMER_MAX_ISA=avx2 runs what an AVX2-only CPU runs, and the header says so: the kernels'
    /// AVX2 level (its product for the recurrence, its FMA probe) and OpenBLAS's Haswell kernels.
    /// A value that names no level is refused before any work.
    func testMaxISAHoldsTheKernelsAndOpenBLASDown() throws {
        let r = try CLI.run(["bench", "train", "--unroll", "4", "--events", "400", "--batch", "16", "--runs", "1",
                             "--seconds", "0.01", "--layouts", "grid", "--grid-hidden", "16", "--grid-layers", "1",
                             "--modes", "helper"], environment: ["DRUMMER_MAX_ISA": "avx2"], removing: ["OPENBLAS_CORETYPE"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let cpuHasAVX512 = drummer_kernels_cpu_isa() == Int32(DRUMMER_ISA_AVX512)
        try XCTSkipUnless(drummer_kernels_cpu_isa() >= Int32(DRUMMER_ISA_AVX2), "this CPU has no AVX2")
        XCTAssertTrue(r.stdout.contains(cpuHasAVX512 ? ", AVX2+FMA (DRUMMER_MAX_ISA=avx2; the CPU has AVX-512)\n"
                                                     : ", AVX2+FMA\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("\nOpenBLAS core: Haswell"), r.stdout)
        XCTAssertTrue(r.stdout.contains("float32 FMA peak (AVX2 FMA register loop)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("recurrent: avx2, 2 stream group(s)"), r.stdout)

        let bad = try CLI.run(["--version"], environment: ["DRUMMER_MAX_ISA": "avx1024"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stdout, "")
        XCTAssertEqual(bad.stderr, "error: DRUMMER_MAX_ISA=avx1024: expected avx512, avx2 or baseline "
                       + "(the highest instruction set the kernels may use)\n")
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
