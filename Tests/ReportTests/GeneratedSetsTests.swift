// The generated files of a report in sets, as `sample --count` names them (NAME-k.mid), and in
// the order the page shows them.
import XCTest
@testable import Report

final class GeneratedSetsTests: XCTestCase {
    /// A shell's g-*.mid gives g-1, g-10, g-11, g-2: the page shows a set's files by number, each
    /// set where its first file was given, any other file where it was given.
    func testASetsFilesAreInNumberOrder() {
        let given = ["out/g-1.mid", "out/g-10.mid", "beat.mid", "out/g-2.mid", "other/g-3.mid", "out/g-11.mid", "out/g-x.mid"]
        XCTAssertEqual(ReportBuilder.ordered(given),
                       ["out/g-1.mid", "out/g-2.mid", "out/g-10.mid", "out/g-11.mid", "beat.mid", "other/g-3.mid", "out/g-x.mid"])
        let sets = ReportBuilder.generatedSets(ReportBuilder.ordered(given))
        XCTAssertEqual(sets.map(\.name), ["out/g (4 files)", "beat", "other/g", "g-x"])
    }
}
