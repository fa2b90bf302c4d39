// Which OpenBLAS kernels run, and getting the fast ones without user action.
//
// Debian's OpenBLAS 0.3.21 is built with DYNAMIC_ARCH and picks its kernels in
// a library constructor, before `main`. On CPUs it does not know (Intel family 6
// model 207, for one) it falls back to "Prescott" generic kernels, 4–6x slower.
// The only public switch is the environment variable OPENBLAS_CORETYPE, read in
// that constructor; so when the detected core is weaker than what the CPU
// supports, `drummer` re-executes itself once with OPENBLAS_CORETYPE set.
// A user's own OPENBLAS_CORETYPE is never overridden. DRUMMER_MAX_ISA (see Kernels.isa)
// holds OpenBLAS's kernels down to the same level as drummer's own, so that an AVX-512
// machine runs what an AVX2-only one runs.
import CBLAS

#if canImport(Glibc)
import Glibc
#endif

public enum BLASRuntime {
    /// Environment variable the re-executed process finds, naming the core
    /// OpenBLAS detected on its own before `drummer` chose another.
    static let reexecMarker = "DRUMMER_OPENBLAS_DETECTED"
    /// Test hook: pretend OpenBLAS detected this core (exercises the re-exec path
    /// on machines where detection already works).
    static let assumeCoreVariable = "DRUMMER_ASSUME_OPENBLAS_CORE"

    /// The core OpenBLAS is running (`openblas_get_corename()`).
    public static var coreName: String {
        guard let p = openblas_get_corename() else { return "unknown" }
        return String(cString: p)
    }

    public static var threads: Int { Int(openblas_get_num_threads()) }

    public static func setThreads(_ n: Int) { openblas_set_num_threads(Int32(max(1, n))) }

    /// Runs `body` with OpenBLAS on one thread, then restores its thread count. Where a result
    /// is to have the same bits on any machine: OpenBLAS splits a product's sums by its thread
    /// count, which follows the cores (or OPENBLAS_NUM_THREADS, or a CPU affinity).
    public static func onOneThread<T>(_ body: () throws -> T) rethrows -> T {
        let before = threads
        if before != 1 { setThreads(1) }
        defer { if before != 1 { setThreads(before) } }
        return try body()
    }

    /// Vector-ISA level of an OpenBLAS core name: 3 = AVX-512, 2 = AVX2/FMA,
    /// 1 = AVX, 0 = SSE or unknown.
    public static func level(ofCore name: String) -> Int {
        switch name.lowercased() {
        case "skylakex", "cooperlake", "sapphirerapids": return 3
        case "haswell", "zen", "skylake": return 2
        case "sandybridge", "bulldozer", "piledriver", "steamroller", "excavator": return 1
        default: return 0
        }
    }

    /// The best level this CPU supports.
    public static var cpuLevel: Int {
        if drummer_cpu_supports_avx512_skylakex() != 0 { return 3 }
        if drummer_cpu_supports_avx2_fma() != 0 { return 2 }
        if drummer_cpu_supports_avx() != 0 { return 1 }
        return 0
    }

    /// The level DRUMMER_MAX_ISA allows OpenBLAS (avx2: 2, baseline: 0), nil when it allows all.
    public static var maxLevel: Int? {
        switch Kernels.isaSetting {
        case .avx2: return 2
        case .baseline: return 0
        case .avx512, nil: return nil
        }
    }

    /// The OPENBLAS_CORETYPE to choose, or nil to leave OpenBLAS's choice alone: a stronger
    /// core than OpenBLAS detected where the CPU runs one, and a weaker one where `maxLevel`
    /// (DRUMMER_MAX_ISA's) is below what it detected. Pure function of its inputs, so the rule
    /// is testable on any machine.
    public static func preferredCoreType(
        detectedCore: String, cpuLevel: Int, userCoreType: String?, maxLevel: Int? = nil
    ) -> String? {
        if let user = userCoreType, !user.isEmpty { return nil }
        let target = min(cpuLevel, maxLevel ?? cpuLevel), detected = level(ofCore: detectedCore)
        guard target > detected || (maxLevel != nil && detected > target) else { return nil }
        switch target {
        case 3: return "SkylakeX"
        case 2: return "Haswell"
        case 1: return "SandyBridge"
        default: return "Prescott"
        }
    }

    /// How the running core was chosen, for `drummer --version` and benchmarks.
    public static var selectionDescription: String {
        let env = ProcessEnvironment.self
        if let detected = env.get(reexecMarker) {
            let why = maxLevel != nil ? " for DRUMMER_MAX_ISA=\(env.get("DRUMMER_MAX_ISA") ?? "")" : ""
            return "\(coreName) (selected by drummer\(why); OpenBLAS detected \(detected))"
        }
        if let user = env.get("OPENBLAS_CORETYPE"), !user.isEmpty {
            return "\(coreName) (OPENBLAS_CORETYPE=\(user) set by the user)"
        }
        return "\(coreName) (detected by OpenBLAS)"
    }

    /// Call first thing in `main`. When OpenBLAS picked weaker kernels than the
    /// CPU supports and the user has not set OPENBLAS_CORETYPE, re-executes the
    /// program with it set (does not return on success). Otherwise returns.
    /// `singleThreaded`: the command runs OpenBLAS on one thread (its own threads do the
    /// parallel work, as the sampler's split steps): the re-executed program then starts
    /// OpenBLAS with one thread (OPENBLAS_NUM_THREADS=1, unless the user set it), so that no
    /// idle OpenBLAS thread spins beside them on a 2-core machine.
    public static func ensureFastKernels(singleThreaded: Bool = false) {
        let env = ProcessEnvironment.self
        if env.get(reexecMarker) != nil { return }  // already re-executed once
        let detected = env.get(assumeCoreVariable) ?? coreName
        guard let core = preferredCoreType(
            detectedCore: detected, cpuLevel: cpuLevel, userCoreType: env.get("OPENBLAS_CORETYPE"), maxLevel: maxLevel)
        else { return }
        setenv("OPENBLAS_CORETYPE", core, 1)
        setenv(reexecMarker, detected, 1)
        let setThreads = singleThreaded && env.get("OPENBLAS_NUM_THREADS") == nil
        if setThreads { setenv("OPENBLAS_NUM_THREADS", "1", 1) }
        let args = CommandLine.arguments
        var cargs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) }
        cargs.append(nil)
        execv("/proc/self/exe", cargs)
        // exec failed: carry on with the kernels we have.
        unsetenv("OPENBLAS_CORETYPE")
        unsetenv(reexecMarker)
        if setThreads { unsetenv("OPENBLAS_NUM_THREADS") }
        for p in cargs { free(p) }
    }
}

/// Reads the process environment (getenv), without Foundation.
public enum ProcessEnvironment {
    public static func get(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        return String(cString: v)
    }
}
