// How the grid model counts a beat's bars in 4/4 (GridGroup.countBars): a pickup is the end of
// a bar, a short last bar the start of one; other bars of another length, and bar lines off the
// 4/4 bar lines, are named.
import XCTest
@testable import DrummerCore

final class GridBarCountTests: XCTestCase {
    let bar = 1920

    /// Positions of hits at `onsets` under meter runs (start tick, bar length), as FileHits
    /// gives them: each hit's tick from its run's bar line, and its bar's length (cut short
    /// where the next run starts before the bar's end).
    func positions(_ onsets: [Int], runs: [(start: Int, length: Int)]) -> (tickInBar: [Int], barTicks: [Int]) {
        var inBar: [Int] = [], lengths: [Int] = []
        for t in onsets {
            let r = runs.last { $0.start <= t }!
            let tick = (t - r.start) % r.length, next = runs.first { $0.start > t }?.start ?? Int.max
            inBar.append(tick)
            lengths.append(min(r.length, next - (t - tick)))
        }
        return (inBar, lengths)
    }

    func count(_ onsets: [Int], runs: [(start: Int, length: Int)]) -> (tickInBar: [Int], barTicks: [Int], problem: GridBarProblem?) {
        var (inBar, lengths) = positions(onsets, runs: runs)
        let problem = GridGroup.countBars(onsets: onsets, tickInBar: &inBar, barTicks: &lengths, bar: bar)
        return (inBar, lengths, problem)
    }

    func testFourFourBarsAreLeftAsTheyAre() {
        let onsets = [120, 960, 1920, 4000, 7680]
        let r = count(onsets, runs: [(0, bar)])
        XCTAssertNil(r.problem)
        XCTAssertEqual(r.tickInBar, [120, 960, 0, 160, 0])
        XCTAssertEqual(r.barTicks, [bar, bar, bar, bar, bar])
    }

    /// A 2/4 pickup (960 ticks) before 4/4, and the same pickup written as a 4/4 bar cut short by
    /// 4/4 restated at tick 960: both read as beats 3 and 4 of a 4/4 bar.
    func testAPickupIsTheEndOfABar() {
        let onsets = [480, 600, 960, 1440, 2880]
        for runs in [[(start: 0, length: 960), (start: 960, length: bar)], [(start: 0, length: bar), (start: 960, length: bar)]] {
            let r = count(onsets, runs: runs)
            XCTAssertNil(r.problem, "\(runs)")
            XCTAssertEqual(r.tickInBar, [1440, 1560, 0, 480, 0], "\(runs)")
            XCTAssertEqual(r.barTicks, [bar, bar, bar, bar, bar], "\(runs)")
        }
    }

    /// A pickup followed by empty bars ends on the 4/4 bar line after its last hit (a 2/4 bar,
    /// and a 4/4 bar cut short at 960, before an empty bar), as the same hits in whole bars.
    func testAPickupBeforeEmptyBars() {
        let onsets = [0, 480, 2880, 3360]
        for runs in [[(start: 0, length: 960), (start: 960, length: bar)], [(start: 0, length: bar), (start: 960, length: bar)]] {
            let r = count(onsets, runs: runs)
            XCTAssertNil(r.problem, "\(runs)")
            XCTAssertEqual(r.tickInBar, [960, 1440, 0, 480], "\(runs)")
            XCTAssertEqual(r.barTicks, [bar, bar, bar, bar], "\(runs)")
        }
    }

    /// A 2/4 last bar is the start of a 4/4 bar.
    func testAShortLastBarIsTheStartOfABar() {
        let r = count([0, 1920, 3840, 4320], runs: [(0, bar), (3840, 960)])
        XCTAssertNil(r.problem)
        XCTAssertEqual(r.tickInBar, [0, 0, 0, 480])
        XCTAssertEqual(r.barTicks, [bar, bar, bar, bar])
    }

    /// A 3/4 song (of one, two or three bars: no 4/4 bar, so no pickup), a 5/4 first bar, a 2/4
    /// bar mid-beat, a 4/4 bar cut short mid-beat and an empty 2/4 bar after a whole 4/4 first
    /// bar (not a pickup: the bars after it are off its bar lines) are named.
    func testOtherBarsAreNamed() {
        XCTAssertEqual(count([0, 1440, 2880, 4320], runs: [(0, 1440)]).problem, .notFourFour(index: 0, barTicks: 1440))
        XCTAssertEqual(count([0, 720], runs: [(0, 1440)]).problem, .notFourFour(index: 0, barTicks: 1440))
        XCTAssertEqual(count([0, 1440], runs: [(0, 1440)]).problem, .notFourFour(index: 0, barTicks: 1440))
        XCTAssertEqual(count([0, 2400, 4800], runs: [(0, 2400)]).problem, .notFourFour(index: 0, barTicks: 2400))
        XCTAssertEqual(count([0, 1920, 2880, 3840], runs: [(0, bar), (1920, 960), (2880, bar)]).problem,
                       .notFourFour(index: 1, barTicks: 960))
        XCTAssertEqual(count([0, 1920, 2880, 4800], runs: [(0, bar), (2880, bar)]).problem, .notFourFour(index: 1, barTicks: 960))
        XCTAssertEqual(count([0, 480, 2880], runs: [(0, bar), (1920, 960), (2880, bar)]).problem, .offTheBarLines(index: 2))
        // A 5/4 first bar is not a pickup, where its hits lie.
        XCTAssertEqual(count([960, 2400], runs: [(0, 2400), (2400, bar)]).problem, .notFourFour(index: 0, barTicks: 2400))
    }

    func testNoHits() {
        var a: [Int] = [], b: [Int] = []
        XCTAssertNil(GridGroup.countBars(onsets: [], tickInBar: &a, barTicks: &b, bar: bar))
    }
}
