// A training checkpoint: everything needed to continue a run exactly, and to
// describe it without any other file. Stored as HDF5 (see Checkpoint+HDF5.swift),
// readable by h5py and h5dump. Layout, format "drummer-checkpoint" version 1
// (P = parameter count = (V+H+1)·4H + (H+1)·V, B = streams, H = hidden size):
//
//   /                       attrs format = "drummer-checkpoint", format_version = 1,
//                                 created_by = "drummer <version>"
//   /model/Wx               float32 [V+H+1, 4H]  gate blocks f, i, o, g; bias last row
//   /model/Wy               float32 [H+1, V]     note logits then tick logits; bias last row
//   /state                  attrs step, epoch, pointer (int64): updates done, epochs
//                                 completed, data pointer of the next chunk
//   /state/h, /state/c      float32 [B, H]        LSTM state carried into the next chunk
//   /optimizer              attrs kind ("sgd" | "momentum" | "rmsprop")
//   /optimizer/<slot>       float32 [P]           one per optimizer slot, flat, Wx then Wy
//   /rng/state              uint64 [4]            xoshiro256** state words after initialisation
//   /rng/seed               uint64 [1]            --seed
//   /vocabulary/ix_to_note  int64 [N]             class index -> MIDI note number
//   /vocabulary/ix_to_tick  int64 [K]             class index -> tick value
//   /hyperparameters        attrs hidden, unroll, batch_size, checkpoint_every, keep,
//                                 log_every, eval_every, lr_decay_every, lr_plateau_patience
//                                 (int64; 0 = off), steps (int64; -1 = until interrupted),
//                                 learning_rate, momentum, decay, epsilon, clip, lr_decay
//                                 (float64 holding the float32 values exactly),
//                                 optimizer, init, init_from, checkpoint_dir (string)
//   /dataset                attrs path, fingerprint (SHA-256 hex of vocabulary + events),
//                                 events, validation_events (int64)
//   /progress               attrs smoothed_loss, best_validation_loss (float64; inf = none),
//                                 best_step (int64; -1 = none), plateau_decays,
//                                 plateau_bad_evaluations (int64), plateau_best (float64)
import DrummerCore

public struct Checkpoint: Sendable {
    public static let formatName = "drummer-checkpoint"
    public static let formatVersion = 1

    public var configuration: RunConfiguration
    public var state: TrainingState
    public var vocabulary: Vocabulary
    /// The run's generator state (xoshiro256** words).
    public var rngState: [UInt64]
    public var datasetPath: String
    public var datasetFingerprint: String
    public var datasetEvents: Int
    public var validationEvents: Int
    /// The smoothed training loss shown in the progress lines.
    public var smoothedLoss: Double
    public var schedule: ScheduleProgress
    /// Lowest validation loss seen so far (infinity when none).
    public var bestValidationLoss: Double
    /// Step of the checkpoint holding `bestValidationLoss` (-1 when none).
    public var bestStep: Int
    public var createdBy: String

    public init(configuration: RunConfiguration, state: TrainingState, vocabulary: Vocabulary,
                rngState: [UInt64], datasetPath: String, datasetFingerprint: String, datasetEvents: Int,
                validationEvents: Int, smoothedLoss: Double, schedule: ScheduleProgress,
                bestValidationLoss: Double, bestStep: Int, createdBy: String = "drummer \(DrummerVersion.string)") {
        self.configuration = configuration; self.state = state; self.vocabulary = vocabulary
        self.rngState = rngState; self.datasetPath = datasetPath; self.datasetFingerprint = datasetFingerprint
        self.datasetEvents = datasetEvents; self.validationEvents = validationEvents
        self.smoothedLoss = smoothedLoss; self.schedule = schedule
        self.bestValidationLoss = bestValidationLoss; self.bestStep = bestStep; self.createdBy = createdBy
    }

    /// The weights held in the checkpoint.
    public func weights() throws -> LSTMWeights {
        try state.weights()
    }
}

/// A checkpoint file that cannot be read or written, naming it and the problem.
public struct CheckpointError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}
