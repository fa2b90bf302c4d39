import XCTest
@testable import Train

final class TrainSmokeTests: XCTestCase {
    func testModuleLinks() {
        // Placeholder until the module's own tests land; it asserts nothing about behaviour.
        XCTAssertTrue(true)
    }
}
