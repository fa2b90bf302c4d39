import XCTest
@testable import Encode

final class EncodeSmokeTests: XCTestCase {
    func testModuleLinks() {
        // Placeholder until the module's own tests land; it asserts nothing about behaviour.
        XCTAssertTrue(true)
    }
}
