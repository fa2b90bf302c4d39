import XCTest

final class VersionTests: XCTestCase {
    func testVersionReportsOpenBLASCore() throws {
        let r = try CLI.run(["--version"], removing: ["OPENBLAS_CORETYPE"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("drummer "), r.stdout)
        XCTAssertTrue(r.stdout.contains("OpenBLAS core: "), r.stdout)
    }

    func testUsersOwnCoreTypeIsLeftAlone() throws {
        let r = try CLI.run(["--version"], environment: ["OPENBLAS_CORETYPE": "Haswell"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("OpenBLAS core: Haswell (OPENBLAS_CORETYPE=Haswell set by the user)"), r.stdout)
    }

    /// Simulates Debian's OpenBLAS falling back to Prescott on an unknown CPU:
    /// drummer must re-execute itself with faster kernels (when the CPU has them).
    func testGenericKernelsAreReplacedAutomatically() throws {
        let r = try CLI.run(["--version"], environment: ["DRUMMER_ASSUME_OPENBLAS_CORE": "Prescott"],
                            removing: ["OPENBLAS_CORETYPE"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let flags = Set(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?
            .split(separator: " ").map(String.init) ?? [])
        if ["avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"].allSatisfy(flags.contains) {
            XCTAssertTrue(r.stdout.contains("OpenBLAS core: SkylakeX (selected by drummer; OpenBLAS detected Prescott)"), r.stdout)
        } else if flags.contains("avx2") && flags.contains("fma") {
            XCTAssertTrue(r.stdout.contains("OpenBLAS core: Haswell (selected by drummer; OpenBLAS detected Prescott)"), r.stdout)
        } else {
            XCTAssertTrue(r.stdout.contains("(detected by OpenBLAS)"), r.stdout)
        }
    }
}
