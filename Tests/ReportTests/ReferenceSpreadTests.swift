// A MIDI-folder reference larger than the files it reads: read evenly through its sorted
// paths (it was the first 5,000, so a folder of ten copies of a corpus was read as its
// first subfolders, and a file sorted last never counted).
import XCTest
@testable import Report

final class ReferenceSpreadTests: XCTestCase {
    func testALargeFolderIsReadEvenlySpaced() {
        let files = (0..<11_500).map { String(format: "c%05d.mid", $0) }
        let read = ReferenceSet.spread(files)
        XCTAssertEqual(read.count, ReferenceSet.maxFiles)
        XCTAssertEqual(read.first, files.first)
        XCTAssertGreaterThan(read.last!, "c11490.mid", "the folder's end is read")
        XCTAssertEqual(Set(read).count, read.count, "no file twice")
        XCTAssertEqual(read, read.sorted(), "in path order")
        // At most maxFiles: all of them, in order.
        let small = Array(files.prefix(ReferenceSet.maxFiles))
        XCTAssertEqual(ReferenceSet.spread(small), small)
    }
}
