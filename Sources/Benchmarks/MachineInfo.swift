// What a benchmark figure was measured on: CPU model, cores, vector instruction sets,
// the OpenBLAS core. Every figure `drummer bench` prints comes after this header.
import CKernels
import DrummerCore
import Foundation

public enum MachineInfo {
    static var cpuModel: String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let v = line.split(separator: ":", maxSplits: 1).last {
                return v.trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
    }

    package static var cores: Int { CPUCount.available }

    /// " (of N online)" when this process may use fewer cores than the machine has online.
    static var coresNote: String {
        let online = ProcessInfo.processInfo.activeProcessorCount
        return online > cores ? " (of \(online) online)" : ""
    }

    /// The widest float32 FMA the kernels run: "AVX-512", "AVX2+FMA" or "no AVX2/FMA", and
    /// what the CPU has when DRUMMER_MAX_ISA holds them lower.
    static var vectorISA: String {
        func label(_ isa: KernelISA) -> String {
            switch isa {
            case .avx512: return "AVX-512"
            case .avx2: return "AVX2+FMA"
            case .baseline: return "no AVX2/FMA"
            }
        }
        let cpu = KernelISA.cpu
        guard Kernels.isa < cpu else { return label(cpu) }
        return "\(label(Kernels.isa)) (DRUMMER_MAX_ISA=\(Kernels.isa.name); the CPU has \(label(cpu)))"
    }

    public static var header: String {
        """
        machine: \(cpuModel), \(cores) core\(cores == 1 ? "" : "s")\(coresNote), \(vectorISA)
        OpenBLAS core: \(BLASRuntime.selectionDescription)
        """
    }

    /// Peak resident set size of this process so far, MiB.
    static var peakRSSMiB: Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}
