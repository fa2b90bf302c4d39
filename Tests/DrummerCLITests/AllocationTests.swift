// The sampler is the deployment runtime: generating a note must not allocate (a
// real-time safe inference step). Counted from outside with an LD_PRELOAD counter
// (Scripts/count-allocations, Scripts/malloc-count.c) on the built binary, as the
// difference between 100 and 5,100 notes:
//   - generation (`drummer bench sample`: the LSTM step, softmax, draws), in any build, for
//     the original layout;
//   - the grid model's generation (`bench sample --model models/groove`), in any build;
//   - the whole `drummer sample` command (the 2017 model and the grid model) and `humanize`, MIDI reading and
//     writing included, in a release build. A
//     debug build allocates in unspecialised generic code (sort comparators, Set) while
//     writing the file, so there the figure is printed, not asserted.
import Foundation
import XCTest

final class AllocationTests: XCTestCase {
    func allocations(_ arguments: [String]) throws -> Int {
        let script = CLI.repoRoot.appendingPathComponent("Scripts/count-allocations").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: script)
        p.arguments = [CLI.binary.path] + arguments
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        if p.terminationStatus == 2, text.contains("no C compiler") { throw XCTSkip("count-allocations: \(text)") }
        XCTAssertEqual(p.terminationStatus, 0, text)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("allocations: ") }),
              let n = Int(line.dropFirst("allocations: ".count)) else {
            XCTFail("no allocation count in: \(text)")
            return -1
        }
        return n
    }

    /// The original layout (note and tick).
    func testGeneratingANoteAllocatesNothing() throws {
        let few = try allocations(["bench", "sample", "--runs", "1", "--notes", "100"])
        let many = try allocations(["bench", "sample", "--runs", "1", "--notes", "5100"])
        print("drummer bench sample: \(few) allocations for 100 notes per run, \(many) for 5,100")
        XCTAssertGreaterThan(few, 0, "the counter counted nothing: it is not interposing malloc")
        XCTAssertLessThan(abs(many - few), 20, "generation allocates per note: \(few) → \(many)")
    }

    /// The shipped grid model (models/groove): its generation draws a step, its hits and their
    /// timing with no allocation (at most 0.01 per hit over 5,000 hits), in any build.
    func testGridGenerationAllocatesNothing() throws {
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let few = try allocations(["bench", "sample", "--runs", "1", "--notes", "100", "--model", model])
        let many = try allocations(["bench", "sample", "--runs", "1", "--notes", "5100", "--model", model])
        print("drummer bench sample --model models/groove: \(few) allocations for 100 notes per run, \(many) for 5,100")
        XCTAssertGreaterThan(few, 0, "the counter counted nothing: it is not interposing malloc")
        XCTAssertLessThanOrEqual(many - few, 50, "the grid sampler allocates per hit: \(few) → \(many)")
    }

    func testSampleCommandAllocatesNothingPerNoteInRelease() throws {
        let dir = try CLI.temporaryDirectory("alloc")
        defer { try? FileManager.default.removeItem(at: dir) }
        let original = try OriginalModel.write(to: dir.appendingPathComponent("original")).path
        for (name, model) in [("the 2017 model", original), ("models/groove", CLI.repoRoot.appendingPathComponent("models/groove").path)] {
            func run(_ n: Int) throws -> Int {
                try allocations(["sample", model, "-n", String(n),
                                 "--seed", "3", "-o", dir.appendingPathComponent("g\(n).mid").path])
            }
            let few = try run(100), many = try run(5_100)
            print("drummer sample (\(name)): \(few) allocations for 100 notes, \(many) for 5,100")
            XCTAssertGreaterThan(few, 0, "the counter counted nothing: it is not interposing malloc")
            #if DEBUG
            print("debug build: the MIDI writer's generic code allocates per note here; asserted in release builds only")
            #else
            // 5,000 more notes: at most a handful more (arrays are reserved up front).
            XCTAssertLessThan(many - few, 50, "allocations grow with the number of notes (\(name)): \(few) → \(many)")
            #endif
        }
        // humanize with the grid model, of those two files: its draws allocate nothing per step;
        // reading the beat grows its arrays by doubling (a few dozen allocations for 5,000 hits).
        func humanize(_ n: Int) throws -> Int {
            try allocations(["humanize", dir.appendingPathComponent("g\(n).mid").path, "--model",
                             CLI.repoRoot.appendingPathComponent("models/groove").path, "--seed", "1",
                             "-o", dir.appendingPathComponent("h\(n).mid").path])
        }
        let few = try humanize(100), many = try humanize(5_100)
        print("drummer humanize (models/groove): \(few) allocations for 100 hits, \(many) for 5,100")
        #if !DEBUG
        XCTAssertLessThan(many - few, 200, "humanize allocates per hit: \(few) → \(many)")
        #endif
    }
}
