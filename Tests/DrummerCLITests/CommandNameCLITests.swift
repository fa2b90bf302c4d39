// A mistyped command gets the nearest command's name, exit status 64.
import XCTest

final class CommandNameCLITests: XCTestCase {
    func testMistypedCommandSuggestsTheNearest() throws {
        for (typed, meant) in [("smaple", "sample"), ("trian", "train"), ("exprot", "export"), ("hum", "humanize"),
                               ("choosestep", "choose-step")] {
            let r = try CLI.run([typed])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.hasPrefix("Error: unknown command '\(typed)'. Did you mean '\(meant)'?"), r.stderr)
        }
        let far = try CLI.run(["xyz"])
        XCTAssertEqual(far.status, 64)
        XCTAssertTrue(far.stderr.contains("The commands are: sample, humanize, play, tab, convert-midi, train, export, import, eval"), far.stderr)
        // Real commands and help are untouched.
        XCTAssertEqual(try CLI.run(["help", "train"]).status, 0)
        XCTAssertEqual(try CLI.run(["tab", "--help"]).status, 0)
        // `help` of a command that does not exist is the same error.
        let help = try CLI.run(["help", "smaple"])
        XCTAssertEqual(help.status, 64, help.stderr)
        XCTAssertTrue(help.stderr.hasPrefix("Error: unknown command 'smaple'. Did you mean 'sample'?"), help.stderr)
        // One level down: bench's commands.
        let bench = try CLI.run(["bench", "trian", "--help"])
        XCTAssertEqual(bench.status, 64, bench.stderr)
        XCTAssertEqual(bench.stderr, "Error: unknown command 'trian'. Did you mean 'train'?\nUsage: drummer bench <subcommand>\n"
                       + "  See 'drummer bench --help' for more information.\n")
        XCTAssertEqual(try CLI.run(["bench", "sample", "--help"]).status, 0)
    }

    /// A name that is not UTF-8 (`-o $'bad\xff.mid'`) was read with its byte repaired: sample wrote
    /// `bad\u{FFFD}.mid`, exit 0, and tab found no file. Refused with the bytes shown, nothing written.
    func testAnArgumentThatIsNotUTF8IsRefused() throws {
        let dir = try CLI.temporaryDirectory("not-utf8")
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let r = try CLI.run(executable: URL(fileURLWithPath: "/bin/sh"),
                            ["-c", "exec \"$0\" sample \"$1\" -n 5 -o \"$(printf 'bad\\377.mid')\"", CLI.binary.path, model], cwd: dir)
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertEqual(r.stderr, "error: argument 6 (bad\\xFF.mid) is not UTF-8 text: drummer reads file names and options as UTF-8; "
                       + "rename the file or give another name\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// A usage error found once the command runs (a --style the model does not have) shows that
    /// command's usage line, as one found while parsing does.
    func testAUsageErrorFoundAtRunTimeShowsTheCommandsUsage() throws {
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let r = try CLI.run(["sample", model, "--style", "nosuch", "-n", "5", "-o", "/nonexistent/x.mid"])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("Error: --style nosuch: \(model) knows the styles "), r.stderr)
        XCTAssertTrue(r.stderr.hasSuffix("\nUsage: drummer sample [<options>] [<model>]\n  See 'drummer sample --help' for more information.\n"),
                      r.stderr)
    }
}
