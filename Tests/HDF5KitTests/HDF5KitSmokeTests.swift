import XCTest
@testable import HDF5Kit

final class HDF5KitSmokeTests: XCTestCase {
    func testModuleLinks() {
        // Placeholder until the module's own tests land; it asserts nothing about behaviour.
        XCTAssertTrue(true)
    }
}
