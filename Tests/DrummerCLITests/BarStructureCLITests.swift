import Foundation
import XCTest

/// `drummer stats`' bar-structure figures end to end, against the independent Python
/// reference (Scripts/reference/bar_structure.py, mido) frozen in Tests/Fixtures/bar-structure.
final class BarStructureCLITests: XCTestCase {
    func testFiguresMatchTheFrozenPythonReference() throws {
        let fixture = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/bar-structure/expected.json")
        let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: fixture)) as? [String: Any])
        let generated = try XCTUnwrap(expected["generated"] as? [String])
        let reference = try XCTUnwrap(expected["reference"] as? [String])
        // The reference side is the folder its files make up.
        XCTAssertEqual(Set(reference.map { ($0 as NSString).pathComponents.prefix(3).joined(separator: "/") }), ["corpus/groove/drummer4"])
        let r = try CLI.run(["stats"] + generated.map { CLI.repoRoot.appendingPathComponent($0).path }
                            + ["--reference", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let structure = try XCTUnwrap(out["bar_structure"] as? [String: Any])
        let figures = try XCTUnwrap(expected["figures"] as? [String: [String: Any]])
        var compared = 0
        for side in ["generated", "reference"] {
            for (key, value) in try XCTUnwrap(figures[side]) {
                if let byClass = value as? [String: Any] {
                    for (name, v) in byClass {
                        let got = ((structure[key] as? [String: Any])?[name] as? [String: Any])?[side] as? NSNumber
                        XCTAssertEqual(try XCTUnwrap(got, "\(key).\(name)").doubleValue, try XCTUnwrap(v as? NSNumber).doubleValue,
                                       accuracy: 1e-9, "\(side) \(key) \(name)")
                        compared += 1
                    }
                } else {
                    let got = (structure[key] as? [String: Any])?[side] as? NSNumber
                    XCTAssertEqual(try XCTUnwrap(got, key).doubleValue, try XCTUnwrap(value as? NSNumber).doubleValue,
                                   accuracy: 1e-9, "\(side) \(key)")
                    compared += 1
                }
            }
        }
        XCTAssertEqual(compared, 2 * (13 + 9 + 9 + 9))
        // The class mix: the Jensen–Shannon divergence of the two sides' hits by class.
        XCTAssertEqual(try XCTUnwrap(structure["class_mix_js_bits"] as? NSNumber).doubleValue,
                       try XCTUnwrap(expected["class_mix_js_bits"] as? NSNumber).doubleValue, accuracy: 1e-9)
        // The terminal table carries the same figures with their targets.
        let text = try CLI.run(["stats"] + generated.map { CLI.repoRoot.appendingPathComponent($0).path }
                               + ["--reference", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path])
        XCTAssertEqual(text.status, 0, text.stderr)
        let lag1 = try XCTUnwrap(text.stdout.split(separator: "\n").first { $0.hasPrefix("bar similarity, lag 1 ") })
        XCTAssertEqual(lag1.split(separator: " ").joined(separator: " "),
                       "bar similarity, lag 1 0.429 0.407 106% of reference ≥ 80% of reference ✓")
    }
}
