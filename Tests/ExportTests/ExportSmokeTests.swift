import XCTest
@testable import Export

final class ExportSmokeTests: XCTestCase {
    func testModuleLinks() {
        // Placeholder until the module's own tests land; it asserts nothing about behaviour.
        XCTAssertTrue(true)
    }
}
