import XCTest

final class VersionTests: XCTestCase {
    /// `drummer --version` is three lines: "drummer X.Y.Z", "OpenBLAS core: CORE (how it was
    /// chosen), N thread(s)", the core one this CPU can run (vector level from /proc/cpuinfo),
    /// and "kernels: LEVEL", drummer's own kernels' instruction set, the CPU's best.
    func testVersionReportsOpenBLASCore() throws {
        let r = try CLI.run(["--version"], removing: ["OPENBLAS_CORETYPE", "DRUMMER_MAX_ISA"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, r.stdout)
        XCTAssertNotNil(lines.first?.wholeMatch(of: /drummer \d+\.\d+\.\d+/), r.stdout)
        let core = try XCTUnwrap(lines.dropFirst().first?.wholeMatch(
            of: /OpenBLAS core: (\w+) \((detected by OpenBLAS|selected by drummer; OpenBLAS detected \w+)\), (\d+) thread\(s\)/),
            r.stdout)
        XCTAssertGreaterThanOrEqual(Int(core.3) ?? 0, 1)
        // The core must be one this CPU runs: no AVX-512 core without avx512f, no AVX2 core without avx2.
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let flags = Set(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?
            .split(separator: " ").map(String.init) ?? [])
        let name = String(core.1).lowercased()
        if ["skylakex", "cooperlake", "sapphirerapids"].contains(name) { XCTAssertTrue(flags.contains("avx512f"), name) }
        if ["haswell", "zen", "skylake"].contains(name) { XCTAssertTrue(flags.contains("avx2"), name) }
        let v4 = ["avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"].allSatisfy(flags.contains)
        let v3 = ["avx2", "fma", "bmi2", "movbe", "f16c"].allSatisfy(flags.contains)
        XCTAssertEqual(lines.last, "kernels: " + (v4 ? "avx512" : v3 ? "avx2" : "baseline"), r.stdout)
    }

    /// DRUMMER_MAX_ISA holds the kernels (and OpenBLAS's core) down, and the version says so;
    /// a level above the CPU's changes nothing.
    func testMaxISAIsReported() throws {
        let r = try CLI.run(["--version"], environment: ["DRUMMER_MAX_ISA": "baseline"], removing: ["OPENBLAS_CORETYPE"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let plain = try CLI.run(["--version"], removing: ["OPENBLAS_CORETYPE", "DRUMMER_MAX_ISA"])
        let cpu = try XCTUnwrap(plain.stdout.split(separator: "\n").last.map { String($0.dropFirst("kernels: ".count)) })
        XCTAssertEqual(lines.last, cpu == "baseline" ? "kernels: baseline"
                                   : "kernels: baseline (DRUMMER_MAX_ISA=baseline; the CPU runs \(cpu))", r.stdout)
        if cpu != "baseline" {
            // Prescott whether OpenBLAS detected it (an unknown model) or drummer held it down to it.
            XCTAssertTrue(lines[1].hasPrefix("OpenBLAS core: Prescott ("), r.stdout)
        }
        let high = try CLI.run(["--version"], environment: ["DRUMMER_MAX_ISA": "avx512"], removing: ["OPENBLAS_CORETYPE"])
        XCTAssertEqual(high.stdout.split(separator: "\n").last.map(String.init), "kernels: \(cpu)", high.stdout)
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
                            removing: ["OPENBLAS_CORETYPE", "DRUMMER_MAX_ISA"])
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
