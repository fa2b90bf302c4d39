// Scripts/chaos-train's short version (6 SIGKILLs: two at random moments, two in checkpoint
// writes, two in evaluations; each time resumed) must end with the weights of an
// uninterrupted run, bit for bit, and leave no temporary file or lock. The long run (30 kills,
// 3,000 steps, hidden 256) is `Scripts/chaos-train` with no option, outside the suite.
import Foundation
import XCTest

final class ChaosCLITests: XCTestCase {
    func testKillsResumeToBitwiseIdenticalWeights() throws {
        let r = try CLI.run(executable: URL(fileURLWithPath: "/bin/bash"),
                            [CLI.repoRoot.appendingPathComponent("Scripts/chaos-train").path, "--short"],
                            environment: ["DRUMMER": CLI.binary.path])
        let text = r.stdout + r.stderr
        print(text)
        XCTAssertEqual(r.status, 0, text)
        XCTAssertTrue(text.contains("chaos-train: final weights (step 300: Wx.bin Wy.bin) bitwise identical to the uninterrupted run"), text)
        XCTAssertTrue(text.contains("chaos-train: no temporary file or lock left in the checkpoint directory"), text)
        let kills = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("chaos-train: 6 SIGKILLs survived (") }, text)
        // At least one kill in a checkpoint write and one in an evaluation (the script fails otherwise).
        XCTAssertFalse(kills.contains(" 0 during checkpoint writes"), String(kills))
        XCTAssertFalse(kills.contains(" 0 during evaluations"), String(kills))
        XCTAssertFalse(text.contains("FAIL"), text)
    }
}
