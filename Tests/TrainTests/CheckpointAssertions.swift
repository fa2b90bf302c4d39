// The check every bitwise-resume test makes: two checkpoints hold the same run state, bit for bit.
import XCTest
@testable import Checkpoints

extension XCTestCase {
    func assertBitwiseEqual(_ s: Checkpoint, _ r: Checkpoint, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(s.state.parameters.map(\.bitPattern), r.state.parameters.map(\.bitPattern), "weights", file: file, line: line)
        XCTAssertEqual(s.state.h.map(\.bitPattern), r.state.h.map(\.bitPattern), "h", file: file, line: line)
        XCTAssertEqual(s.state.c.map(\.bitPattern), r.state.c.map(\.bitPattern), "c", file: file, line: line)
        XCTAssertEqual(s.state.optimizer, r.state.optimizer, "optimizer slots", file: file, line: line)
        XCTAssertEqual([s.state.step, s.state.epoch, s.state.pointer], [r.state.step, r.state.epoch, r.state.pointer], file: file, line: line)
        XCTAssertEqual(s.smoothedLoss.bitPattern, r.smoothedLoss.bitPattern, "smoothed loss", file: file, line: line)
        XCTAssertEqual(s.bestValidationLoss, r.bestValidationLoss, file: file, line: line)
        XCTAssertEqual(s.datasetFingerprint, r.datasetFingerprint, file: file, line: line)
    }
}
