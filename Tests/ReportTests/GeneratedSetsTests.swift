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
        XCTAssertEqual(sets.map(\.name), ["g (4 files)", "beat", "g-3", "g-x"])
    }

    /// NAME-N names a set when two or more files share NAME; a lone file keeps its whole name
    /// (a Groove file's 4-4 is its meter, not a sample's number).
    func testALoneFileKeepsItsWholeName() {
        XCTAssertEqual(ReportBuilder.generatedSets(["g/136_funk-fast_125_fill_4-4.mid"]).map(\.name),
                       ["136_funk-fast_125_fill_4-4"])
        XCTAssertEqual(ReportBuilder.generatedSets(["a/x-1.mid", "a/x-2.mid", "b/x-1.mid", "b/y-2.mid"]).map(\.name),
                       ["x (2 files)", "x-1", "y-2"])
    }
}
