// The cores this process may run on: the CPUs in its affinity mask (`taskset`, a container's
// cpuset), at most its cgroup's CPU quota rounded up (`docker run --cpus 1.5`: 2), at least
// one. ProcessInfo's count is the machine's online CPUs, which ignores both: a process pinned
// to one CPU would split its steps over two threads that take turns on it.
import CKernels
import Foundation

public enum CPUCount {
    /// Cores available to this process (read once).
    public static let available: Int = {
        let quota = readQuota() ?? Int.max
        return max(1, min(affinity() ?? ProcessInfo.processInfo.activeProcessorCount, quota))
    }()

    /// CPUs in this process's affinity mask; nil where it cannot be read.
    static func affinity() -> Int? {
        let count = Int(drummer_affinity_cpu_count())
        return count > 0 ? count : nil
    }

    /// The cgroup v2 CPU quota in whole cores (rounded up); nil without one.
    static func readQuota() -> Int? {
        // /proc/self/cgroup's v2 line is "0::/path"; a container sees its own group as "/".
        var candidates = ["/sys/fs/cgroup/cpu.max"]
        if let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
           let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) {
            let path = String(line.dropFirst(3))
            if path != "/" { candidates.insert("/sys/fs/cgroup" + path + "/cpu.max", at: 0) }
        }
        for file in candidates {
            if let text = try? String(contentsOfFile: file, encoding: .utf8) { return quota(cpuMax: text) }
        }
        return nil
    }

    /// Whole cores of a cgroup v2 `cpu.max` ("QUOTA PERIOD" in µs, or "max PERIOD": none),
    /// rounded up; nil for no quota or text that is not of that form.
    static func quota(cpuMax text: String) -> Int? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let period = Int(fields[1]), period > 0, let quota = Int(fields[0]), quota > 0 else {
            return nil
        }
        return (quota + period - 1) / period
    }
}
