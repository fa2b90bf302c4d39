// InputOverlap.check: an output that is an input (links followed), lies inside an input
// directory, or (a directory output) holds an input is refused; other outputs pass.
import FileOutput
import Foundation
import XCTest

final class InputOverlapTests: XCTestCase {
    private var tmp: String!
    private var fm: FileManager { FileManager.default }

    override func setUpWithError() throws {
        tmp = NSTemporaryDirectory() + "input-overlap-\(UUID().uuidString)"
        try fm.createDirectory(atPath: tmp + "/model", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: tmp + "/in.mid"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: tmp + "/model/model.json"))
        try fm.createSymbolicLink(atPath: tmp + "/link.mid", withDestinationPath: "in.mid")
    }
    override func tearDownWithError() throws { try? fm.removeItem(atPath: tmp) }

    private func refusal(_ output: String, directory: Bool = false, _ inputs: [CommandInput]) -> String? {
        do { try InputOverlap.check(output: output, directory: directory, inputs: inputs) } catch {
            return String(describing: error)
        }
        return nil
    }

    func testRefusedOutputs() {
        let midi = CommandInput(tmp + "/in.mid", role: "the primer")
        let model = CommandInput(tmp + "/model", role: "the model")
        XCTAssertEqual(refusal(tmp + "/in.mid", [midi]), "\(tmp!)/in.mid: is the primer \(tmp!)/in.mid; write elsewhere")
        XCTAssertEqual(refusal(tmp + "/link.mid", [midi]), "\(tmp!)/link.mid: is the primer \(tmp!)/in.mid; write elsewhere")
        XCTAssertEqual(refusal(tmp + "/model/Wx.bin", [model]),
                       "\(tmp!)/model/Wx.bin: lies inside the model \(tmp!)/model; write elsewhere")
        XCTAssertNotNil(refusal(tmp + "/model/new/deeper/x.mid", [model]))
        XCTAssertNotNil(refusal(tmp + "/model/../model/model.json", [model]))
        XCTAssertEqual(refusal(tmp, directory: true, [midi]),
                       "\(tmp!): holds the primer \(tmp!)/in.mid, which replacing the directory would delete; write elsewhere")
        XCTAssertNotNil(refusal(tmp + "/model", directory: true, [model]))
    }

    func testAllowedOutputs() {
        let midi = CommandInput(tmp + "/in.mid", role: "the primer")
        XCTAssertNil(refusal(tmp + "/out.mid", [midi]))
        XCTAssertNil(refusal("-", [CommandInput("-", role: "standard input")]))
        XCTAssertNil(refusal("/dev/null", [CommandInput("/dev/null", role: "nothing")]))
        XCTAssertNil(refusal(tmp + "/out.mid", [CommandInput(tmp + "/missing.mid", role: "a missing file")]))
        // A model directory read whole may be replaced by the directory output, not written into.
        let whole = CommandInput(tmp + "/model", role: "the model", mayBeReplaced: true)
        XCTAssertNil(refusal(tmp + "/model", directory: true, [whole]))
        XCTAssertNotNil(refusal(tmp + "/model/Wx.bin", [whole]))
    }
}
