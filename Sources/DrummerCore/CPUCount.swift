// The cores this process may run on: the CPUs in its affinity mask (`taskset`, a container's
// cpuset), at most its cgroup's CPU quota rounded up (`docker run --cpus 1.5`: 2; cgroup v2 or
// v1, the smallest along the group's path), at least one. ProcessInfo's count is the machine's
// online CPUs, which ignores both: a process pinned to one CPU would split its steps over two
// threads that take turns on it.
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

    /// The smallest CPU quota along this process's cgroup, from its group up to the root, in
    /// whole cores rounded up; nil without one. Read from cgroup v2's `cpu.max` (mounted at
    /// `root`, or at `root`/unified beside v1) and v1's cpu controller (`cpu.cfs_quota_us` over
    /// `cpu.cfs_period_us`). A group path that is not under the mount (a container that sees
    /// its own group as the mount's root) is walked up until one is.
    static func readQuota(cgroupFile: String = "/proc/self/cgroup", root: String = "/sys/fs/cgroup") -> Int? {
        guard let text = try? String(contentsOfFile: cgroupFile, encoding: .utf8) else { return nil }
        var quotas: [Int] = []
        for line in text.split(separator: "\n") {
            // "hierarchy-id:controllers:path"; v2's line is "0::path".
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let controllers = fields[1].split(separator: ","), path = String(fields[2])
            if fields[0] == "0" && fields[1].isEmpty {
                for mount in [root, root + "/unified"] {
                    quotas += groupsUp(from: path, under: mount).compactMap { dir in
                        (try? String(contentsOfFile: dir + "/cpu.max", encoding: .utf8)).flatMap { quota(cpuMax: $0) }
                    }
                }
            } else if controllers.contains("cpu") {
                for mount in Set([root + "/" + fields[1], root + "/cpu", root + "/cpu,cpuacct"]) {
                    quotas += groupsUp(from: path, under: mount).compactMap { dir in
                        guard let q = try? String(contentsOfFile: dir + "/cpu.cfs_quota_us", encoding: .utf8),
                              let p = try? String(contentsOfFile: dir + "/cpu.cfs_period_us", encoding: .utf8) else { return nil }
                        return quota(cpuMax: q.trimmingCharacters(in: .whitespacesAndNewlines) + " " + p)
                    }
                }
            }
        }
        return quotas.min()
    }

    /// The directories of group `path` and of each group above it that exist under `mount`.
    static func groupsUp(from path: String, under mount: String) -> [String] {
        var parts = path.split(separator: "/").map(String.init), dirs: [String] = []
        while true {
            let dir = parts.isEmpty ? mount : mount + "/" + parts.joined(separator: "/")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue { dirs.append(dir) }
            if parts.isEmpty { return dirs }
            parts.removeLast()
        }
    }

    /// Whole cores of a cgroup v2 `cpu.max` ("QUOTA PERIOD" in µs, or "max PERIOD": none; v1's
    /// quota and period read alike, its -1 for none), rounded up; nil for no quota or text that
    /// is not of that form.
    static func quota(cpuMax text: String) -> Int? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let period = Int(fields[1]), period > 0, let quota = Int(fields[0]), quota > 0 else {
            return nil
        }
        return (quota + period - 1) / period
    }
}
