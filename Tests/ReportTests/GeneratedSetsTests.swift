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

    /// More sets than the palette's colours less the reference's: the files that are in no
    /// NAME-N set are pooled into one set; beyond that, the sets after the eighth.
    func testManySetsArePooled() {
        let loose = (1...300).map { "gen/beat_\($0).mid" }
        XCTAssertEqual(ReportBuilder.generatedSets(loose).map(\.name), ["300 files"])
        XCTAssertEqual(ReportBuilder.generatedSets(loose).first?.paths, loose)
        let two = ["a-1.mid", "a-2.mid", "b-1.mid", "b-2.mid", "b-3.mid"]
        XCTAssertEqual(ReportBuilder.generatedSets(two + loose.prefix(20)).map(\.name), ["a (2 files)", "b (3 files)", "20 other files"])
        // Up to 9 sets are kept as they are.
        XCTAssertEqual(ReportBuilder.generatedSets(two + loose.prefix(7)).count, 9)
        let many = (1...12).flatMap { ["s\($0)-1.mid", "s\($0)-2.mid"] }
        let sets = ReportBuilder.generatedSets(many + ["lone.mid"])
        XCTAssertEqual(sets.map(\.name), (1...8).map { "s\($0) (2 files)" } + ["9 other files"])
        XCTAssertEqual(sets.last?.paths, Array(many.suffix(8)) + ["lone.mid"])
    }
}
