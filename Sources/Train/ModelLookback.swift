// The model's own bars as lookback inputs (`drummer train --lookback-from-model P`, a grid
// model's): while training, each bar of the training data is, with probability P, read by the
// lookback inputs of the bars after it (1, 2, 4 … bars on) as the model's own draw of that bar
// instead of the data's.
//
// Why: fed the data, a grid model predicts a bar as the data play it (docs/research.md, *Where
// the gap is*: given a snare on beat 2, a snare on beat 4 with probability 0.745, the data
// 0.746); sampling, its lookback reads the bars it drew itself, and a bar it drew with a slip
// (half a backbeat) is what it copies next. Input noise that drops single lookback hits
// (`--input-noise-draw drop`) trains on one kind of slip; this trains on the model's own, whole
// bars at a time: the bar the lookback reads holds what the model would have played there (its
// slips, its extra hi-hats), the bar to predict is still the data's, so the model learns to play
// the drummer's bar after a bar of its own rather than to copy its slips.
//
// The drawn bar: before each chunk's forward and backward pass, a forward sweep over the
// chunk's true inputs (the one `--input-noise-draw model` makes; made once when both are on)
// gives the model's prediction of every step from the true steps before it, and each step of a
// drawn bar is a draw from it: the hit set from the hits output, then each hit class's velocity
// bin from its velocity output. (A step's draw is from the data's history, not from the model's
// own earlier draws: the parallel form of scheduled sampling, as `--input-noise-draw model`.)
// A lookback input reads the drawn step when the step lies in the chunk (its prediction is
// there); the steps of a bar before the chunk's first row stay the data's.
//
// The draws are a pure function of (run seed, training step, event index): which bars are
// drawn and what each step draws, so every lookback reading one step reads the same draw, a
// resumed run replays them bit for bit, and the stream groups draw what one thread would.

import DrummerCore

package struct ModelLookback: Sendable, Equatable {
    /// P, in (0, 1).
    let probability: Double
    let seed: UInt64
    let lookback: GridLookback
    /// The bars back each lookback set reads, and the input column of its first group (a
    /// hit-set lookback: its one group; classes or velocities: one group per drum class).
    let bars: [Int]
    let columns: [Int]
    /// The input column of the position in the bar (of the step a row predicts).
    let positionColumn: Int
    /// The output groups of the hit set and of each class's velocity bin.
    let hitsOutput: Int
    let velocityOutputs: [Int]
    /// The velocity bins V: a lookback velocity group reads a bin, V for not hit, V + 1 before the start.
    let velocityBins: Int

    /// The lookback `probability` asks for on a model of `modelGroups` trained in chunks of
    /// `unroll` rows, or nil at 0. Throws when the model is not a grid model (only a grid model
    /// reads bars back) and when no lookback can read a step in the chunk (`unroll` at most the
    /// rows back of its nearest bar: < 16 one bar back).
    package init?(probability p: Float, seed: UInt64, modelGroups: ModelGroups, unroll: Int) throws {
        guard p > 0 else { return nil }
        guard let grid = modelGroups.grid else {
            throw SettingError(option: "--lookback-from-model", message:
                "needs a grid model (--layout grid): only a grid model's lookback inputs read the bars before")
        }
        let nearest = grid.lookbackBars.first ?? 1, rows = Self.rowsBack(bars: nearest)
        guard unroll > rows else {
            throw SettingError(option: "--lookback-from-model", message:
                "has no effect with --unroll \(unroll): a lookback reads a drawn step only within the chunk, and "
                + "\(nearest == 1 ? "one bar" : "\(nearest) bars") back is \(rows) rows earlier "
                + "(use --unroll \(rows + 1) or more; 64 or more for most rows)")
        }
        let inputs = modelGroups.inputNames, outputs = modelGroups.outputNames
        let first = grid.lookback == .hitSets ? grid.lookbackBars.map { "lookback_\($0)" }
            : grid.lookbackBars.map { "lookback_\($0)_" + GridGroup.classNames[0] }
        guard let position = inputs.firstIndex(of: "position"), let hits = outputs.firstIndex(of: "hits") else {
            throw SettingError(option: "--lookback-from-model", message: "needs a grid model's position input and hits output")
        }
        var columns: [Int] = [], velocity: [Int] = []
        for name in first {
            guard let i = inputs.firstIndex(of: name) else {
                throw SettingError(option: "--lookback-from-model", message: "needs the lookback input \(name), which this model lacks")
            }
            columns.append(i)
        }
        for c in GridGroup.classNames {
            guard let o = outputs.firstIndex(of: "velocity_" + c) else {
                throw SettingError(option: "--lookback-from-model", message: "needs the output velocity_\(c), which this model lacks")
            }
            velocity.append(o)
        }
        probability = Double(p)
        self.seed = seed
        lookback = grid.lookback
        bars = grid.lookbackBars
        self.columns = columns
        positionColumn = position
        hitsOutput = hits
        velocityOutputs = velocity
        velocityBins = grid.velocityBins
    }

    /// Whether the bar whose first step is event `barStart` is read as the model's draw at
    /// training step `step`.
    @inline(__always)
    func drawsBar(step: Int, barStart: Int) -> Bool {
        let z = InputNoise.key(seed, 0x6C6F_6F6B_6261_636B, step, barStart)  // "lookback"
        return Double(z >> 11) * 0x1.0p-53 < probability
    }

    /// The random word that draws output `slot` (0: the hit set, 1 + c: class c's velocity bin)
    /// of the step at event `event` at training step `step`.
    @inline(__always)
    func word(step: Int, event: Int, slot: Int) -> UInt64 {
        InputNoise.key(seed, 0x6D6F_6465_6C62_6172, step, event, slot)  // "modelbar"
    }

    /// What lookback group `c` (0 for a hit-set lookback, else the drum class) reads of a step
    /// that drew hit set `hitSet` and velocity bins `velocity` (read for the hit classes only).
    @inline(__always)
    func value(hitSet: Int, velocity: (Int) -> Int, group c: Int) -> Int32 {
        switch lookback {
        case .hitSets: return Int32(hitSet)
        case .classes: return Int32((hitSet >> c) & 1)
        case .velocities: return hitSet & (1 << c) != 0 ? Int32(velocity(c)) : Int32(velocityBins)
        }
    }

    /// The class a lookback group holds where its bar lies before the file's start (never replaced).
    var beforeStart: Int32 {
        switch lookback {
        case .hitSets: return Int32(GridGroup.startOfFile)
        case .classes: return 2
        case .velocities: return Int32(velocityBins + 1)
        }
    }

    /// How many rows before a row its lookback `bars` back reads: the row holding the step
    /// bars·16 before the step it predicts, that is bars·16 − 1 rows back.
    static func rowsBack(bars: Int) -> Int { bars * GridGroup.stepsPerBar - 1 }

    /// For each bars back, the share of a chunk's U rows whose lookback reads a step in the
    /// chunk, which alone can be a drawn one: (U − rowsBack) / U, at least 0.
    package func reach(unroll U: Int) -> [(bars: Int, share: Double)] {
        bars.map { ($0, Double(max(0, U - Self.rowsBack(bars: $0))) / Double(max(1, U))) }
    }

    /// Groups per lookback set.
    var groupsPerBar: Int { lookback == .hitSets ? 1 : GridGroup.classCount }
}
