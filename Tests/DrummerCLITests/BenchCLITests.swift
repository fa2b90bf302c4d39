import CKernels
import Foundation
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
        XCTAssertTrue(lines.contains("layout original: H=8, V=226 (17 notes + 209 ticks), 400 synthetic events, SGD; a timestep is 0.012 MFLOP"),
                      r.stdout)
        XCTAssertTrue(lines.contains("settings: U=5, 1 run of ≥ 0.01 s, median"), r.stdout)
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

    /// `--grid-rows` trains the grid layout on a corpus's rows as `drummer encode models/groove`
    /// writes them (here one file of the shipped corpus), and says so; rows of another shape, a
    /// class outside its group and too few rows are refused, naming the file, before any timing.
    func testGridRowsTrainOnAnEncodedCorpusAndBadRowsAreRefused() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let midi = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer6/session3/2_rock_100_beat_4-4.mid").path
        let rows = dir.appendingPathComponent("rows.npy").path
        let encoded = try CLI.run(["encode", CLI.repoRoot.appendingPathComponent("models/groove").path, "--data", midi, "-o", rows])
        XCTAssertEqual(encoded.status, 0, encoded.stderr)
        let bench = ["bench", "train", "--unroll", "4", "--batch", "16", "--runs", "1", "--seconds", "0.01", "--layouts", "grid",
                     "--grid-hidden", "16", "--grid-layers", "1", "--modes", "helper"]
        let r = try CLI.run(bench + ["--grid-rows", rows])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("51 input groups (1218 rows), 19 output groups (710 columns); Adam; a timestep is "), r.stdout)
        // A grid-only run does not describe the 2017 layout it does not time.
        XCTAssertFalse(r.stdout.contains("layout original"), r.stdout)
        // A drummer's rows: most velocity and offset targets are "not hit", so the head skips work.
        XCTAssertTrue(r.stdout.contains(" MFLOP; 498 rows of \(rows) (on them the head's sparse output groups skip about "), r.stdout)
        XCTAssertTrue(r.stdout.contains("% of a timestep; GFLOP/s counts all of it)\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("grid          median "), r.stdout)
        let uniform = try CLI.run(bench + ["--events", "400"])
        XCTAssertEqual(uniform.status, 0, uniform.stderr)
        XCTAssertTrue(uniform.stdout.contains(" MFLOP; 400 steps of uniform classes (real rows, --grid-rows, train faster)\n"), uniform.stdout)

        // An int32 .npy of `shape` holding `values`, written by hand (format 1.0).
        func npy(_ values: [Int32], shape: [Int], name: String) throws -> String {
            var header = "{'descr': '<i4', 'fortran_order': False, 'shape': (\(shape.map(String.init).joined(separator: ", "))\(shape.count == 1 ? "," : "")), }"
            while (10 + header.utf8.count + 1) % 64 != 0 { header += " " }
            header += "\n"
            var data = Data([0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(header.utf8.count & 0xFF), UInt8(header.utf8.count >> 8)])
            data.append(contentsOf: Array(header.utf8))
            for v in values { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
            let path = dir.appendingPathComponent(name).path
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }
        var classes = [Int32](repeating: 0, count: 200 * 51)
        let wide = try npy(classes, shape: [200, 51], name: "zeros.npy")
        XCTAssertEqual(try CLI.run(bench + ["--grid-rows", wide]).status, 0, "class 0 of every group is a row")
        classes[7 * 51 + 50] = 29  // style: 29 classes, 0..<29
        let outside = try npy(classes, shape: [200, 51], name: "outside.npy")
        let narrow = try npy([Int32](repeating: 0, count: 200 * 50), shape: [200, 50], name: "narrow.npy")
        let short = try npy([Int32](repeating: 0, count: 40 * 51), shape: [40, 51], name: "short.npy")
        for (path, message) in [
            (outside, "error: --grid-rows \(outside): row 7, group 50 holds class 29, outside 0..<29 (the shipped grid model's groups)\n"),
            (narrow, "error: --grid-rows \(narrow): shape [200, 50], expected rows × 51 (one class per input group of the shipped grid model, as `drummer encode models/groove --data DATA` writes)\n"),
            (short, "error: --grid-rows \(short): 40 rows are too few for batch 16: each stream needs unroll + 1 = 5 rows\n"),
        ] {
            let bad = try CLI.run(bench + ["--grid-rows", path])
            XCTAssertEqual(bad.status, 1, path)
            XCTAssertEqual(bad.stderr.hasSuffix(message) ? message : bad.stderr, message)
            XCTAssertFalse(bad.stdout.contains("median"), bad.stdout)
        }
        let missing = try CLI.run(bench + ["--grid-rows", dir.appendingPathComponent("none.npy").path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("none.npy"), missing.stderr)
        let original = try CLI.run(["bench", "train", "--layouts", "original", "--grid-rows", rows])
        XCTAssertEqual(original.status, 64, original.stderr)
        XCTAssertTrue(original.stderr.contains("--grid-rows needs the grid layout (--layouts grid)"), original.stderr)
    }

    /// `drummer bench sample --model` times a model directory (the shipped grid model) with its
    /// own sizes, and refuses sizes given beside it.
    func testBenchSampleTimesAGivenModel() throws {
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let r = try CLI.run(["bench", "sample", "--model", model, "--notes", "50", "--runs", "1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("model: \(model) (grid layout, 2 layer(s) of H=256, I=1218, O=710); 50 hits per generation"), r.stdout)
        XCTAssertTrue(r.stdout.split(separator: "\n").contains { $0.hasPrefix("threads=1  median") && $0.hasSuffix("ms per 50 notes") }, r.stdout)
        // Its threads are the step's own (OpenBLAS on one thread, as `drummer sample` sets it):
        // OpenBLAS's second thread beside the split step measured 32 times slower, a
        // configuration no command runs.
        XCTAssertTrue(r.stdout.contains("threads: the threads a step runs on (split in two halves), OpenBLAS on 1 thread"), r.stdout)
        // Any size beside --model is refused, its default value included.
        for size in [["--hidden", "16"], ["--hidden", "200"], ["--note-classes", "17"]] {
            let bad = try CLI.run(["bench", "sample", "--model", model] + size)
            XCTAssertEqual(bad.status, 64, "\(size)")
            XCTAssertTrue(bad.stderr.contains("--model takes its sizes and groups from the model"), bad.stderr)
        }
    }

    /// A process pinned to one CPU (`taskset -c 0`, as a container's cpuset does) counts one core:
    /// the header says so, the FMA peak has no 2-core figure (two probe threads taking turns on
    /// one CPU read as twice its peak) and the sampler's step is not split over two threads.
    func testAProcessPinnedToOneCPUCountsOneCore() throws {
        let online = ProcessInfo.processInfo.activeProcessorCount
        try XCTSkipIf(online < 2, "this CPU count (one online) cannot show a pinned process apart")
        let taskset = URL(fileURLWithPath: "/usr/bin/taskset")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: taskset.path), "this CPU's system has no /usr/bin/taskset")
        let r = try CLI.run(executable: taskset, ["-c", "0", CLI.binary.path, "bench", "train", "--unroll", "5", "--hidden", "8",
                                                 "--events", "400", "--batch", "1", "--runs", "1", "--seconds", "0.01",
                                                 "--layouts", "original", "--modes", "blas1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.contains(", 1 core (of \(online) online), ") ?? false, r.stdout)
        let peak = lines.first { $0.hasPrefix("float32 FMA peak") } ?? ""
        XCTAssertTrue(peak.hasSuffix(" GFLOP/s on 1 core"), r.stdout)
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let s = try CLI.run(executable: taskset, ["-c", "0", CLI.binary.path, "bench", "sample", "--model", model,
                                                 "--notes", "20", "--runs", "1"])
        XCTAssertEqual(s.status, 0, s.stderr)
        let rows = s.stdout.split(separator: "\n").filter { $0.hasPrefix("threads=") }
        XCTAssertEqual(rows.count, 1, s.stdout)
        XCTAssertTrue(rows.first?.hasPrefix("threads=1 ") ?? false, s.stdout)
    }
}
