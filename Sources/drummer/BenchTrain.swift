import ArgumentParser
import DrummerCore
import Foundation
import Train

struct BenchTrain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Training timesteps/s on a synthetic sequence (TBPTT chunks, SGD), per batch size and BLAS thread count.")

    @Option(parsing: .unconditional, help: "Unroll steps per chunk (U).")
    var unroll: Int = 200

    @Option(parsing: .unconditional, help: "Hidden size (H).")
    var hidden: Int = 200

    @Option(parsing: .unconditional, help: "Notes in the synthetic vocabulary.")
    var notes: Int = 17

    @Option(parsing: .unconditional, help: "Tick values in the synthetic vocabulary.")
    var ticks: Int = 209

    @Option(parsing: .unconditional, help: "Events in the synthetic sequence.")
    var events: Int = 52_260

    @Option(parsing: .upToNextOption, help: "Batch sizes (streams) to measure.")
    var batch: [Int] = [1, 32]

    @Option(parsing: .upToNextOption,
            help: "Modes to measure: helper (the trainer's default: helper thread, 1 OpenBLAS thread), helper-openblas (the same with the recurrent products on OpenBLAS instead of the AVX-512 kernel), blas1 (no helper, 1 OpenBLAS thread), blas2 (no helper, 2 OpenBLAS threads).")
    var modes: [Mode] = Mode.allCases

    enum Mode: String, CaseIterable, ExpressibleByArgument {
        case helper, helperOpenBLAS = "helper-openblas", blas1, blas2
        var blasThreads: Int { self == .blas2 ? 2 : 1 }
        var usesHelper: Bool { self == .helper || self == .helperOpenBLAS }
    }

    @Option(parsing: .unconditional, help: "Timed runs per figure (the median is reported).")
    var runs: Int = 5

    @Option(parsing: .unconditional, help: "Minimum seconds per timed run.")
    var seconds: Double = 1

    func validate() throws {
        guard unroll >= 1, hidden >= 1, notes >= 1, ticks >= 1 else {
            throw ValidationError("--unroll, --hidden, --notes and --ticks must be at least 1")
        }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
        guard !batch.isEmpty, batch.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("--batch needs sizes of at least 1")
        }
        guard !modes.isEmpty else { throw ValidationError("--modes needs at least one mode") }
        for b in batch where events / b < unroll + 1 {
            throw ValidationError("--events \(events) is too few for batch \(b): each stream needs unroll + 1 events")
        }
    }

    func run() throws {
        print(MachineInfo.header)
        print("settings: U=\(unroll) H=\(hidden) V=\(notes + ticks) (\(notes) notes + \(ticks) ticks), "
              + "\(events) synthetic events, SGD, \(runs) runs of ≥ \(seconds) s, median")
        let shape = ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        let flops = FMAPeak.flopsPerTimestep(hidden: hidden, vocab: notes + ticks)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let peakAll = FMAPeak.measure(threads: cores), peakOne = FMAPeak.measure(threads: 1)
        if let p1 = peakOne, let p = peakAll {
            print(String(format: "float32 FMA peak (AVX-512 register loop): %.0f GFLOP/s on 1 core, %.0f on %d; a timestep is %.3f MFLOP",
                         p1, p, cores, flops / 1e6))
        } else {
            print(String(format: "a timestep is %.3f MFLOP (FMA peak probe needs AVX-512)", flops / 1e6))
        }
        var rng = SeededRNG(seed: 1)
        var seq: [Int32] = []
        seq.reserveCapacity(2 * events)
        for _ in 0..<events {
            seq.append(Int32(rng.index(below: notes)))
            seq.append(Int32(rng.index(below: ticks)))
        }
        let weights = try Initializer.weights(shape: shape, scheme: .original, rng: &rng)
        let defaultThreads = BLASRuntime.threads
        for b in batch {
            for mode in modes {
                BLASRuntime.setThreads(mode.blasThreads)
                let state = TrainingState(weights: weights, unroll: unroll, batch: b, optimizer: .sgd)
                let trainer = try Trainer(state: state, events: seq, optimizer: OptimizerConfig(learningRate: 0.1))
                trainer.usesHelperThread = mode.usesHelper
                if mode == .helperOpenBLAS {
                    // Only differs from `helper` where the AVX-512 kernel is the default.
                    guard trainer.usesOwnRecurrentKernel else { continue }
                    trainer.usesOwnRecurrentKernel = false
                }
                for _ in 0..<2 { trainer.step() }  // warm-up
                var rates: [Double] = []
                for _ in 0..<runs {
                    var chunks = 0
                    let start = DispatchTime.now().uptimeNanoseconds
                    var elapsed = 0.0
                    repeat {
                        trainer.step()
                        chunks += 1
                        elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                    } while elapsed < seconds
                    rates.append(Double(chunks * unroll * b) / elapsed)
                }
                let sorted = rates.sorted()
                let kernel = trainer.usesOwnRecurrentKernel ? "avx512" : "openblas"
                let label = mode.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)
                let median = sorted[sorted.count / 2]
                let gflops = median * flops / 1e9
                // Against the peak of the cores the mode can use: blas1 runs on one.
                let used = mode == .blas1 ? 1 : cores
                let ofPeak = (used == 1 ? peakOne : peakAll).map {
                    String(format: ", %.0f%% of the %d-core peak", 100 * gflops / $0, used)
                } ?? ""
                print(String(format: "batch %3d  %@  median %9.0f timesteps/s  (min %.0f, max %.0f)  %.0f GFLOP/s%@  recurrent: %@, %d stream group(s)",
                             b, label as NSString, median, sorted[0], sorted[sorted.count - 1], gflops,
                             ofPeak as NSString, kernel as NSString, trainer.streamGroupCount))
            }
        }
        BLASRuntime.setThreads(1)
        var evalRates: [Double] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            let r = Evaluator.evaluate(weights: weights, events: seq)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            evalRates.append(Double(r.predictions) / elapsed)
        }
        evalRates.sort()
        print(String(format: "evaluation (forward only, 1 stream, 1 OpenBLAS thread): median %.0f events/s",
                     evalRates[evalRates.count / 2]))
        BLASRuntime.setThreads(defaultThreads)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        print(String(format: "peak RSS: %.1f MiB", Double(usage.ru_maxrss) / 1024))
    }
}
