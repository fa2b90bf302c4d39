// The two initialisation schemes: distributions, structure, determinism.
import DrummerCore
import XCTest
@testable import Checkpoints
@testable import Train

final class InitializerTests: XCTestCase {
    let shape = ModelShape(notes: 5, ticks: 7, hidden: 8)

    func testOriginalIsTruncatedNormalEverywhere() throws {
        var rng = SeededRNG(seed: 1)
        let w = try Initializer.weights(shape: ModelShape(notes: 17, ticks: 40, hidden: 32), scheme: .original, rng: &rng)
        let all = w.wx + w.wy
        XCTAssertTrue(all.allSatisfy { abs($0) <= 0.02 }, "redrawn beyond 2σ")
        let mean = all.reduce(0.0) { $0 + Double($1) } / Double(all.count)
        let sd = (all.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(all.count)).squareRoot()
        XCTAssertEqual(mean, 0, accuracy: 2e-4)
        // A normal truncated at ±2σ has standard deviation 0.8796σ.
        XCTAssertEqual(sd, 0.008796, accuracy: 2e-4)
        let biasRow = Array(w.wx[((17 + 40 + 32) * 4 * 32)...])
        XCTAssertTrue(biasRow.contains { $0 != 0 }, "biases are drawn too")
    }

    func testKerasStructure() throws {
        var rng = SeededRNG(seed: 2)
        let w = try Initializer.weights(shape: shape, scheme: .keras, rng: &rng)
        let H = shape.hidden, G = 4 * H, V = shape.notes + shape.ticks
        let limitIn = Float((6.0 / Double(V + G)).squareRoot())
        // Glorot uniform on ±limit: within it, reaching near it, with variance limit²/3 (20%:
        // over 4 standard errors of 384 draws), so a shrunken or zero block fails too.
        func assertUniform(_ block: ArraySlice<Float>, _ limit: Float, _ name: String) {
            XCTAssertTrue(block.allSatisfy { abs($0) <= limit }, name)
            XCTAssertGreaterThan(block.map { abs($0) }.max() ?? 0, 0.9 * limit, name)
            let variance = block.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(block.count)
            XCTAssertEqual(variance, Double(limit * limit) / 3, accuracy: 0.2 * Double(limit * limit) / 3, name)
        }
        assertUniform(w.wx[0..<(V * G)], limitIn, "input block")
        // Recurrent block H×4H has orthonormal rows.
        let rec = Array(w.wx[(V * G)..<((V + H) * G)])
        for a in 0..<H {
            for b in 0..<H {
                var dot: Float = 0
                for j in 0..<G { dot += rec[a * G + j] * rec[b * G + j] }
                XCTAssertEqual(dot, a == b ? 1 : 0, accuracy: 1e-5, "rows \(a), \(b)")
            }
        }
        let bias = Array(w.wx[((V + H) * G)...])
        XCTAssertEqual(bias, (0..<G).map { $0 < H ? Float(1) : 0 }, "forget-gate bias 1, others 0")
        let limitOut = Float((6.0 / Double(H + V)).squareRoot())
        assertUniform(w.wy[0..<(H * V)], limitOut, "output block")
        XCTAssertTrue(w.wy[(H * V)...].allSatisfy { $0 == 0 }, "zero output bias")
    }

    func testSeedDeterminesWeights() throws {
        for scheme in InitScheme.allCases {
            var a = SeededRNG(seed: 9), b = SeededRNG(seed: 9), c = SeededRNG(seed: 10)
            let wa = try Initializer.weights(shape: shape, scheme: scheme, rng: &a)
            let wb = try Initializer.weights(shape: shape, scheme: scheme, rng: &b)
            let wc = try Initializer.weights(shape: shape, scheme: scheme, rng: &c)
            XCTAssertEqual(wa, wb)
            XCTAssertNotEqual(wa, wc)
        }
    }

    func testRejectsEmptyShape() {
        var rng = SeededRNG(seed: 1)
        XCTAssertThrowsError(try Initializer.weights(shape: ModelShape(notes: 0, ticks: 3, hidden: 4), scheme: .keras, rng: &rng))
    }
}
