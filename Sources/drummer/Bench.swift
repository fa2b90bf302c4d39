import ArgumentParser
import DrummerCore
import Foundation

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks (figures, with the machine and settings; not tests).",
        subcommands: [BenchBLAS.self, BenchTrain.self, BenchSample.self])
}

/// Describes this machine for benchmark headers.
enum MachineInfo {
    static var cpuModel: String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else {
            return "unknown CPU"
        }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let v = line.split(separator: ":", maxSplits: 1).last {
                return v.trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
    }

    static var header: String {
        """
        machine: \(cpuModel), \(ProcessInfo.processInfo.activeProcessorCount) cores
        OpenBLAS core: \(BLASRuntime.selectionDescription)
        """
    }
}

struct BenchBLAS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blas",
        abstract: "GFLOP/s of the GEMV and GEMM shapes the LSTM uses, 1 thread and default threads.")

    @Option(parsing: .unconditional, help: "Timed runs per figure (the median is reported).")
    var runs: Int = 7

    @Option(parsing: .unconditional, help: "Minimum seconds per timed run.")
    var seconds: Double = 0.2

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
    }

    func run() throws {
        print(MachineInfo.header)
        let defaultThreads = BLASRuntime.threads
        let k = 427, n = 800
        var rng = SeededRNG(seed: 1)
        let b = (0..<(k * n)).map { _ in Float(rng.uniform(-1, 1)) }
        let a = (0..<(200 * k)).map { _ in Float(rng.uniform(-1, 1)) }
        var c = [Float](repeating: 0, count: 200 * n)
        for threads in Array(Set([1, defaultThreads])).sorted() {
            BLASRuntime.setThreads(threads)
            for (label, m) in [("GEMV (1x427)·(427x800)", 1), ("GEMM (200x427)·(427x800)", 200)] {
                let flops = 2.0 * Double(m * n * k)
                let rates = a.withUnsafeBufferPointer { pa in
                    b.withUnsafeBufferPointer { pb in
                        c.withUnsafeMutableBufferPointer { pc in
                            timedRates(flops: flops) {
                                if m == 1 {
                                    BLAS.sgemv(.transposed, rows: k, cols: n, alpha: 1, a: pb, lda: n,
                                               x: pa, beta: 0, y: pc)
                                } else {
                                    BLAS.sgemm(.none, .none, m: m, n: n, k: k, alpha: 1, a: pa, lda: k,
                                               b: pb, ldb: n, beta: 0, c: pc, ldc: n)
                                }
                            }
                        }
                    }
                }
                let sorted = rates.sorted()
                print(String(format: "%-26@ threads=%d  median %7.1f GFLOP/s  (min %.1f, max %.1f, %d runs)",
                             label as NSString, threads, sorted[sorted.count / 2], sorted.first!, sorted.last!,
                             sorted.count))
            }
        }
        BLASRuntime.setThreads(defaultThreads)
    }

    /// Runs `body` repeatedly; returns GFLOP/s for each of `runs` timed runs.
    func timedRates(flops: Double, _ body: () -> Void) -> [Double] {
        for _ in 0..<50 { body() }  // warm-up
        var rates: [Double] = []
        for _ in 0..<runs {
            var reps = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var elapsed = 0.0
            repeat {
                for _ in 0..<20 { body() }
                reps += 20
                elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            } while elapsed < seconds
            rates.append(flops * Double(reps) / elapsed / 1e9)
        }
        return rates
    }
}
