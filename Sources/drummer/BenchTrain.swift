import ArgumentParser
import DrummerCore
import Foundation
import Train

struct BenchTrain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Training timesteps/s on a synthetic sequence (TBPTT chunks, SGD), per batch size and BLAS thread count.")

    @Option(help: "Unroll steps per chunk (U).")
    var unroll: Int = 200

    @Option(help: "Hidden size (H).")
    var hidden: Int = 200

    @Option(help: "Notes in the synthetic vocabulary.")
    var notes: Int = 17

    @Option(help: "Tick values in the synthetic vocabulary.")
    var ticks: Int = 209

    @Option(help: "Events in the synthetic sequence.")
    var events: Int = 52_260

    @Option(parsing: .upToNextOption, help: "Batch sizes (streams) to measure.")
    var batch: [Int] = [1, 32]

    @Option(parsing: .upToNextOption, help: "OpenBLAS thread counts to measure (default: 1 and the default count).")
    var threads: [Int] = []

    @Option(help: "Timed runs per figure (the median is reported).")
    var runs: Int = 5

    @Option(help: "Minimum seconds per timed run.")
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
        guard threads.allSatisfy({ $0 >= 1 }) else { throw ValidationError("--threads must be at least 1") }
        for b in batch where events / b < unroll + 1 {
            throw ValidationError("--events \(events) is too few for batch \(b): each stream needs unroll + 1 events")
        }
    }

    func run() throws {
        print(MachineInfo.header)
        print("settings: U=\(unroll) H=\(hidden) V=\(notes + ticks) (\(notes) notes + \(ticks) ticks), "
              + "\(events) synthetic events, SGD, \(runs) runs of ≥ \(seconds) s, median")
        let shape = ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        var rng = SeededRNG(seed: 1)
        var seq: [Int32] = []
        seq.reserveCapacity(2 * events)
        for _ in 0..<events {
            seq.append(Int32(rng.index(below: notes)))
            seq.append(Int32(rng.index(below: ticks)))
        }
        let weights = try Initializer.weights(shape: shape, scheme: .original, rng: &rng)
        let defaultThreads = BLASRuntime.threads
        let threadCounts = threads.isEmpty ? Array(Set([1, defaultThreads])).sorted() : threads
        for b in batch {
            for t in threadCounts {
                BLASRuntime.setThreads(t)
                let state = TrainingState(weights: weights, unroll: unroll, batch: b, optimizer: .sgd)
                let trainer = try Trainer(state: state, events: seq, optimizer: OptimizerConfig(learningRate: 0.1))
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
                print(String(format: "batch %3d  threads %d  median %9.0f timesteps/s  (min %.0f, max %.0f)",
                             b, t, sorted[sorted.count / 2], sorted[0], sorted[sorted.count - 1]))
            }
        }
        BLASRuntime.setThreads(defaultThreads)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        print(String(format: "peak RSS: %.1f MiB", Double(usage.ru_maxrss) / 1024))
    }
}
