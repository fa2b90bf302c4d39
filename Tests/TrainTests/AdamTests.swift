// `--optimizer adam` (a lever measured on the bar-structure targets): the update is PyTorch's
// torch.optim.Adam, gradient entries clipped to ±clip first. Reference values written by
// PyTorch 2.13 (lr 0.01, the third gradient entry 7.0 clipped to 5):
//   p = nn.Parameter(torch.tensor([0.5, -1.0, 2.0])); opt = torch.optim.Adam([p], lr=0.01)
//   for g in [[0.1, -0.2, 7.0], [0.3, 0.0, -0.4], [-0.05, 0.2, 0.1]]:
//       p.grad = torch.tensor(g).clamp(-5, 5); opt.step()
//
// `--weight-decay` (decoupled): with it, Adam is torch.optim.AdamW. Reference values by
// PyTorch 2.13.0+cpu, the same three gradients: torch.optim.AdamW([p], lr=0.01, weight_decay=0.5).
import XCTest
@testable import Train

final class AdamTests: XCTestCase {
    /// Three Adam updates of [0.5, −1, 2] with `config` and the gradients of the header, each
    /// checked against PyTorch's parameters after it (`torch[t]`); returns the moments m and v.
    func checkThreeUpdates(_ config: OptimizerConfig, against torch: [[Float]],
                           file: StaticString = #filePath, line: UInt = #line) -> (m: [Float], v: [Float]) {
        var params: [Float] = [0.5, -1.0, 2.0]
        var m = [Float](repeating: 0, count: 3), v = [Float](repeating: 0, count: 3)
        let grads: [[Float]] = [[0.1, -0.2, 7.0], [0.3, 0.0, -0.4], [-0.05, 0.2, 0.1]]
        var config = config
        for (t, g) in grads.enumerated() {
            config.step = t + 1
            var g = g
            Optimizer.update(config, params: &params, grad: &g, slot: &m, slot2: &v, count: 3)
            for k in 0..<3 {
                XCTAssertEqual(params[k], torch[t][k], accuracy: 2e-6, "update \(t + 1), parameter \(k)", file: file, line: line)
            }
        }
        return (m, v)
    }

    func testThreeUpdatesMatchPyTorch() {
        let torch: [[Float]] = [[0.49000001, -0.99000001, 1.99000001], [0.480822206, -0.983299434, 1.98391449],
                                [0.474813074, -0.984158099, 1.9790839]]
        let (m, v) = checkThreeUpdates(OptimizerConfig(kind: .adam, learningRate: 0.01, clip: 5), against: torch)
        let torchM: [Float] = [0.0301000047, 0.0038000003, 0.379000008]
        let torchV: [Float] = [0.000102390019, 7.99200425e-05, 0.0251198672]
        for k in 0..<3 {
            XCTAssertEqual(m[k], torchM[k], accuracy: 1e-7)
            XCTAssertEqual(v[k], torchV[k], accuracy: 1e-8)
        }
        XCTAssertEqual(OptimizerState(kind: .adam, parameterCount: 2).slots, ["m": [0, 0], "v": [0, 0]])
    }

    func testWeightDecayMatchesPyTorchAdamW() {
        let torch: [[Float]] = [[0.48750001192092896, -0.9850000143051147, 1.9800000190734863],
                                [0.47588470578193665, -0.9733744263648987, 1.9640145301818848],
                                [0.4674961566925049, -0.9693662524223328, 1.9493638277053833]]
        _ = checkThreeUpdates(OptimizerConfig(kind: .adam, learningRate: 0.01, clip: 5, weightDecay: 0.5), against: torch)
    }

    /// The decay comes before every optimizer's own step: SGD's update is p·(1 − lr·λ) − lr·g.
    func testWeightDecayWithSGD() {
        var params: [Float] = [0.5, -1.0, 2.0]
        let g: [Float] = [0.1, -0.2, 7.0]
        let config = OptimizerConfig(kind: .sgd, learningRate: 0.1, clip: 5, weightDecay: 0.2)
        var grad = g
        Optimizer.update(config, params: &params, grad: &grad, slot: nil, count: 3)
        let expected: [Float] = [0.5 * 0.98 - 0.01, -1.0 * 0.98 + 0.02, 2.0 * 0.98 - 0.5]
        for k in 0..<3 { XCTAssertEqual(params[k], expected[k], accuracy: 1e-6, "parameter \(k)") }
    }
}
