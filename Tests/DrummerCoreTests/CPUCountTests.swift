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
}
