// Issue 23: Scripts/chaos-train's short version (20 SIGKILLs at random moments, in
// checkpoint writes and in evaluations; each time resumed) must end with the weights of an
// uninterrupted run, bit for bit, and leave no temporary file or lock.
import Foundation
import XCTest

final class ChaosCLITests: XCTestCase {
    func testTwentyKillsResumeToBitwiseIdenticalWeights() throws {
        let r = try CLI.run(executable: URL(fileURLWithPath: "/bin/bash"),
                            [CLI.repoRoot.appendingPathComponent("Scripts/chaos-train").path, "--short"],
                            environment: ["DRUMMER": CLI.binary.path])
        let text = r.stdout + r.stderr
        print(text)
        XCTAssertEqual(r.status, 0, text)
        XCTAssertTrue(text.contains("chaos-train: final weights (step 1000: Wx.bin Wy.bin) bitwise identical to the uninterrupted run"), text)
        XCTAssertTrue(text.contains("chaos-train: no temporary file or lock left in the checkpoint directory"), text)
        let kills = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("chaos-train: 20 SIGKILLs survived (") }, text)
        // At least one kill in a checkpoint write and one in an evaluation (the script fails otherwise).
        XCTAssertFalse(kills.contains(" 0 during checkpoint writes"), String(kills))
        XCTAssertFalse(kills.contains(" 0 during evaluations"), String(kills))
        XCTAssertFalse(text.contains("FAIL"), text)
    }
}
