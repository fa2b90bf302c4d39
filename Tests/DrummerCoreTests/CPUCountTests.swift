import Foundation
import XCTest
@testable import DrummerCore

/// The cores a process may use: its affinity mask, at most its cgroup's CPU quota rounded up.
final class CPUCountTests: XCTestCase {
    func testACgroupQuotaIsRoundedUpToWholeCores() {
        XCTAssertEqual(CPUCount.quota(cpuMax: "100000 100000\n"), 1)
        XCTAssertEqual(CPUCount.quota(cpuMax: "150000 100000\n"), 2)
        XCTAssertEqual(CPUCount.quota(cpuMax: "50000 100000"), 1)
        XCTAssertEqual(CPUCount.quota(cpuMax: "400000 100000"), 4)
        XCTAssertNil(CPUCount.quota(cpuMax: "max 100000\n"))
        XCTAssertNil(CPUCount.quota(cpuMax: ""))
        XCTAssertNil(CPUCount.quota(cpuMax: "100000 0"))
        XCTAssertNil(CPUCount.quota(cpuMax: "1 2 3"))
    }

    /// This process's mask holds between one CPU and every online one, and the count used is
    /// no more than it.
    func testTheAffinityMaskBoundsTheCount() throws {
        let online = ProcessInfo.processInfo.activeProcessorCount
        let mask = try XCTUnwrap(CPUCount.affinity())
        XCTAssertGreaterThanOrEqual(mask, 1)
        XCTAssertLessThanOrEqual(mask, online)
        XCTAssertGreaterThanOrEqual(CPUCount.available, 1)
        XCTAssertLessThanOrEqual(CPUCount.available, mask)
    }

    /// A cgroup tree written out as the kernel shows it (files under a temporary root): the
    /// smallest quota on the way from the process's group up to the mount's root counts.
    func testTheSmallestQuotaAlongTheGroupPathCounts() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        func write(_ path: String, _ text: String) throws {
            let url = URL(fileURLWithPath: root + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        // v2: a quota of 1.5 cores on the parent slice, none on the leaf.
        try write("/fs/system.slice/cpu.max", "150000 100000\n")
        try write("/fs/system.slice/job.scope/cpu.max", "max 100000\n")
        try write("/proc-v2", "0::/system.slice/job.scope\n")
        XCTAssertEqual(CPUCount.readQuota(cgroupFile: root + "/proc-v2", root: root + "/fs"), 2)
        // v2 beside v1, at unified/; the group seen as the mount's root (a container).
        try write("/hybrid/unified/cpu.max", "100000 100000\n")
        try write("/proc-hybrid", "12:cpu,cpuacct:/\n0::/docker/abc\n")
        XCTAssertEqual(CPUCount.readQuota(cgroupFile: root + "/proc-hybrid", root: root + "/hybrid"), 1)
        // v1: the cpu controller's quota and period; -1 is none.
        try write("/v1/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n")
        try write("/v1/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n")
        try write("/v1/cpu,cpuacct/cpu.cfs_quota_us", "-1\n")
        try write("/v1/cpu,cpuacct/cpu.cfs_period_us", "100000\n")
        try write("/proc-v1", "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n")
        XCTAssertEqual(CPUCount.readQuota(cgroupFile: root + "/proc-v1", root: root + "/v1"), 3)
        // No quota anywhere; no cgroup file.
        try write("/proc-none", "3:cpu,cpuacct:/user.slice\n")
        XCTAssertNil(CPUCount.readQuota(cgroupFile: root + "/proc-none", root: root + "/v1-empty"))
        XCTAssertNil(CPUCount.readQuota(cgroupFile: root + "/missing", root: root))
    }
}
