// GridStyles (the grid layout's style input): the rules that read a file's style from its path,
// the styles of a training set (rare ones and files without a style are "other", the last), the
// draw in proportion to training steps, a part of a name standing for the styles that have it
// (and the draw among them), what is refused, and the encoder's style column.
import XCTest
@testable import DrummerCore

final class GridStylesTests: XCTestCase {
    func testRules() {
        let groove = GridStyleRule.grooveNames
        XCTAssertEqual(groove.style(ofPath: "drummer1/session1/1_funk-groove1_138_beat_4-4.mid"), "funk")
        XCTAssertEqual(groove.style(ofPath: "102_funk_95_beat_4-4.mid"), "funk")
        XCTAssertEqual(groove.style(ofPath: "d/5_Latin-Brazilian-Samba_90_fill_4-4.mid"), "latin")
        XCTAssertNil(groove.style(ofPath: "rock/take3.mid"), "not a Groove name: no style")
        XCTAssertNil(groove.style(ofPath: "x_funk_95.mid"), "the first field is the file's number")
        XCTAssertNil(groove.style(ofPath: "1__95_beat.mid"))
        let folders = GridStyleRule.folders
        XCTAssertEqual(folders.style(ofPath: "Rock/take3.mid"), "rock")
        XCTAssertEqual(folders.style(ofPath: "a/jazz/take3.mid"), "jazz", "the folder the file lies in")
        XCTAssertNil(folders.style(ofPath: "take3.mid"), "a file at the top has none")
        let drummers = GridStyleRule.grooveDrummers
        XCTAssertEqual(drummers.style(ofPath: "drummer5/session1/1_funk-groove1_138_beat_4-4.mid"), "drummer5")
        XCTAssertEqual(drummers.style(ofPath: "groove/Drummer10/eval_session/take.mid"), "drummer10", "lowercased")
        XCTAssertNil(drummers.style(ofPath: "drummer/session1/take.mid"), "no number")
        XCTAssertNil(drummers.style(ofPath: "drummer5x/take.mid"))
        XCTAssertNil(drummers.style(ofPath: "drummer5.mid"), "the file's own name is no folder")
        let both = GridStyleRule.grooveDrummerNames
        XCTAssertEqual(both.style(ofPath: "drummer5/session1/7_latin-samba_90_beat_4-4.mid"), "drummer5-latin")
        XCTAssertNil(both.style(ofPath: "session1/7_latin-samba_90_beat_4-4.mid"), "no drummer")
        XCTAssertNil(both.style(ofPath: "drummer5/take3.mid"), "no Groove name")
    }

    func testAPartOfANameStandsForTheStylesThatHaveIt() throws {
        let styles = try GridStyles(rule: .grooveDrummerNames, names: ["drummer5-latin", "drummer1-latin", "drummer1-rock", "other"],
                                    steps: [6, 2, 1, 1])
        XCTAssertEqual(styles.indices(matching: "drummer1-rock"), [2], "a whole name: that style")
        XCTAssertEqual(styles.indices(matching: "Latin"), [0, 1])
        XCTAssertEqual(styles.indices(matching: "drummer1"), [1, 2])
        XCTAssertEqual(styles.indices(matching: "other"), [3])
        XCTAssertEqual(styles.indices(matching: "lat"), [], "a part, not a prefix")
        XCTAssertEqual(styles.indices(matching: "drummer5-rock"), [], "a name the model does not have")
        XCTAssertEqual(styles.indices(matching: ""), [])
        // Among [0, 1] (steps 6 and 2): u below 0.75 gives 0, above 1.
        XCTAssertEqual(styles.draw(uniform: 0, among: [0, 1]), 0)
        XCTAssertEqual(styles.draw(uniform: 0.74, among: [0, 1]), 0)
        XCTAssertEqual(styles.draw(uniform: 0.75, among: [0, 1]), 1)
        XCTAssertEqual(styles.draw(uniform: 0.999, among: [1, 2]), 2)
        XCTAssertEqual(styles.draw(uniform: 0.5, among: [2]), 2)
        let unplayed = try GridStyles(rule: .folders, names: ["a", "b", "other"], steps: [0, 0, 1])
        XCTAssertEqual(unplayed.draw(uniform: 0.9, among: [1, 0]), 1, "none of them has steps: the first")
    }

    func testStylesOfATrainingSet() throws {
        var files: [(path: String, steps: Int)] = []
        for i in 0..<10 { files.append(("\(i)_funk_95_beat_4-4.mid", 10)) }      // 100 steps
        for i in 0..<12 { files.append(("\(i)_rock-prog_95_beat_4-4.mid", 20)) } // 240 steps
        for i in 0..<9 { files.append(("\(i)_jazz_95_beat_4-4.mid", 5)) }        // too few files: other
        files.append(("loose.mid", 7))                                             // no style: other
        let styles = try GridStyles(rule: .grooveNames, files: files)
        XCTAssertEqual(styles.names, ["rock", "funk", "other"], "most steps first, other last")
        XCTAssertEqual(styles.steps, [240, 100, 52])
        XCTAssertEqual(styles.index(ofPath: "3_rock_120_beat_4-4.mid"), 0)
        XCTAssertEqual(styles.index(ofPath: "3_jazz_120_beat_4-4.mid"), 2, "a style the model does not know is other")
        XCTAssertEqual(styles.index(ofPath: "song.mid"), 2)
        XCTAssertEqual(styles.index(named: "Funk"), 1)
        XCTAssertNil(styles.index(named: "polka"))
        // Ties in steps go by name.
        let tied = try GridStyles(rule: .folders, files: (0..<10).flatMap { i in [("b/\(i).mid", 1), ("a/\(i).mid", 1)] })
        XCTAssertEqual(tied.names, ["a", "b", "other"])
        XCTAssertEqual(tied.steps, [10, 10, 0])
    }

    func testDrawFollowsTheSteps() throws {
        let styles = try GridStyles(rule: .folders, names: ["a", "b", "other"], steps: [3, 1, 0])
        XCTAssertEqual(styles.draw(uniform: 0), 0)
        XCTAssertEqual(styles.draw(uniform: 0.74), 0)
        XCTAssertEqual(styles.draw(uniform: 0.75), 1)
        XCTAssertEqual(styles.draw(uniform: 0.999), 1, "a style without steps is never drawn")
    }

    func testRefused() {
        for (names, steps) in [(["a", "b"], [1, 1]),               // other not last
                               (["a", "a", "other"], [1, 1, 1]),   // twice
                               (["A", "other"], [1, 1]),           // not lowercase
                               (["a\nb", "other"], [1, 1]),        // a line break (one name per line in a checkpoint)
                               (["a", "other"], [1]),              // steps do not match
                               (["a", "other"], [0, 0]),           // no steps at all
                               (["a", "other"], [-1, 2])] {
            XCTAssertThrowsError(try GridStyles(rule: .folders, names: names, steps: steps), "\(names) \(steps)")
        }
    }

    func testEncoderWritesTheStyle() throws {
        let v = try VelocityGroup(bins: [1...63, 64...127], histogram: [Int](repeating: 1, count: 127))
        let plain = try GridGroup(ppq: 480, velocity: v, offsets: [-30, 0], notes: [36, 38, 42, 46, 45, 48, 50, 49, 51],
                                  lookback: .classes)
        var styled = plain
        styled.styles = try GridStyles(rule: .folders, names: ["a", "b", "other"], steps: [1, 1, 1])
        XCTAssertEqual(styled.inputGroups, plain.inputGroups + [3])
        XCTAssertEqual(styled.inputNames, plain.inputNames + ["style"])
        XCTAssertEqual(styled.outputGroups, plain.outputGroups, "the style is read, not predicted")
        var seq = styled.sequence([GridHit(step: 0, drumClass: 0, velocity: 100, offset: 0, note: 36),
                                   GridHit(step: 17, drumClass: 1, velocity: 40, offset: 0, note: 38)], steps: 18, style: 1)
        let k = plain.inputGroups.count
        let rows = GridEncoder(group: styled).rows(of: seq), plainRows = GridEncoder(group: plain).rows(of: seq)
        XCTAssertEqual(rows.count, (seq.count + 1) * (k + 1))
        for r in 0...seq.count {
            XCTAssertEqual(rows[r * (k + 1) + k], 1, "every row of the file: its style")
            let start = r * (k + 1), plainStart = r * k
            let columns = Array(rows[start..<(start + k)]), plainColumns = Array(plainRows[plainStart..<(plainStart + k)])
            XCTAssertEqual(columns, plainColumns, "the other columns as without a style input")
        }
        seq.style = 2
        XCTAssertEqual(GridEncoder(group: styled).rows(of: seq)[k], 2)
    }
}
