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

    package static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The widest float32 FMA this CPU runs: "AVX-512", "AVX2+FMA" or "no AVX2/FMA".
    static var vectorISA: String {
        if drummer_kernels_have_avx512() != 0 { return "AVX-512" }
        if drummer_kernels_have_avx2_fma() != 0 { return "AVX2+FMA" }
        return "no AVX2/FMA"
    }

    public static var header: String {
        """
        machine: \(cpuModel), \(cores) cores, \(vectorISA)
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
