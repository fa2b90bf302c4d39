import XCTest
@testable import MIDIParse

final class MIDIParseSmokeTests: XCTestCase {
    func testModuleLinks() {
        // Placeholder until the module's own tests land; it asserts nothing about behaviour.
        XCTAssertTrue(true)
    }
}
