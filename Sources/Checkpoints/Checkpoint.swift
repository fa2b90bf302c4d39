// A training checkpoint: everything needed to continue a run exactly, and to
// describe it without any other file. Stored as HDF5 (see Checkpoint+HDF5.swift),
// readable by h5py and h5dump (HDF5 ≥ 1.10). Layout, format "drummer-checkpoint" version 2, or
// 3 for a model of more than one layer (P = parameter count, the floats of every matrix below;
// B = streams, H = hidden size, L = layers):
//
//   (bytes 0..<512)         the seal: SHA-256 of the rest of the file (CheckpointSeal.swift),
//                           an HDF5 user block; the HDF5 file starts at byte 512. Every
//                           object header is checksummed and every dataset has a Fletcher-32.
//   /                       attrs format = "drummer-checkpoint", format_version = 2,
//                                 created_by = "drummer <version>", run_id (32 hex digits)
//   /model/Wx               float32 [I+H+1, 4H]  layer 0: gate blocks f, i, o, g; bias last row
//   /model/Wx1, Wx2, …      float32 [2H+1, 4H]   layers 1…L−1 (version 3): input rows (the h of the
//                                                layer below), W_rec, bias
//   /model/Wy               float32 [H+1, O]     output groups' logits (note, tick, …); bias last row
//   /state                  attrs step, epoch, pointer (int64): updates done, epochs
//                                 completed, data pointer of the next chunk
//   /state/h, /state/c      float32 [B, H]        LSTM state carried into the next chunk
//                                                ([L, B, H] with more than one layer)
//   /optimizer              attrs kind ("sgd" | "momentum" | "rmsprop")
//   /optimizer/<slot>       float32 [P]           one per optimizer slot, flat, every Wx then Wy
//   /rng/state              uint64 [4]            xoshiro256** state words after initialisation
//   /rng/seed               uint64 [1]            --seed
//   /vocabulary/ix_to_note  int64 [N]             class index -> MIDI note number
//   /vocabulary/ix_to_tick  int64 [K]             class index -> tick value
//   /groups                 (version 2; absent or empty: the original layout)
//   /groups/position        attrs encoding ("onehot" | "binary"), slots, ticks_per_slot, ppq,
//                                 meter ("4/4"): the position-in-bar input group
//   /groups/velocity/bins   int64 [B, 2]          velocity bins [low, high], ascending
//   /groups/velocity/histogram int64 [127]        training hits per velocity 1...127
//   /hyperparameters        one attribute per training setting, named and typed as the
//                                 settings table (Train/Settings.swift) says: int64 (0 = off,
//                                 steps -1 = until interrupted), float64 holding the float32
//                                 value exactly, or string ("" = none); a setting added after a
//                                 checkpoint was written reads as its `absent` value (input_noise
//                                 0, input_noise_groups "", input_noise_draw uniform, layers 1;
//                                 seed from /rng/seed)
//   /dataset                attrs path, fingerprint (SHA-256 hex of vocabulary + events),
//                                 events, validation_events (int64)
//   /progress               attrs smoothed_loss, best_validation_loss (float64; inf = none),
//                                 best_step (int64; -1 = none), plateau_decays,
//                                 plateau_bad_evaluations (int64), plateau_best (float64),
//                                 pending_evaluation_step_loss (float64; only in a checkpoint saved
//                                 when a stop request cut its step's evaluation short: the step's
//                                 loss, for the evaluation the resumed run does first)
import DrummerCore
import Train

public struct Checkpoint: Sendable {
    package static let formatName = "drummer-checkpoint"
    /// The newest version this code reads. 2: sealed (SHA-256 header), checksummed HDF5, a run
    /// id; 3: stacked layers (/model/Wx1…, /state/h and c of shape [L, B, H]). Version 1 files
    /// still load.
    public static let formatVersion = 3

    /// The version written for a model of `shape`: the oldest that holds it (a one-layer model
    /// stays version 2, so that earlier releases still read it; a stacked one is version 3,
    /// which they refuse instead of reading only its first layer).
    public static func version(for shape: ModelShape) -> Int { shape.layers > 1 ? 3 : 2 }

    public var configuration: RunConfiguration
    public var state: TrainingState
    /// The model's groups: the vocabulary, and the position and velocity tables when it has them.
    public var groups: ModelGroups
    public var vocabulary: Vocabulary { groups.vocabulary }
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
    /// The run this checkpoint belongs to: 32 lowercase hex digits, the same in every checkpoint
    /// of one run (resumed runs included); "" for version 1 files, which had none.
    public var runID: String
    /// The format version the file was read with (the current one for a checkpoint made in memory).
    public var formatVersion: Int
    public var createdBy: String
    /// The loss of this checkpoint's step when a stop request cut that step's evaluation short
    /// (nil: nothing pending, or no loss known). A run resumed from it evaluates the step first, as
    /// the uninterrupted run did: the best step, the plateau schedule and early stopping read
    /// that evaluation.
    public var pendingEvaluation: PendingEvaluation?
    /// Retired settings the run trained with (`Settings.retired`, stored with another value
    /// than off), as "--flag value": such a checkpoint is refused on resume.
    public var retiredSettingsInUse: [String] = []

    public init(configuration: RunConfiguration, state: TrainingState, groups: ModelGroups,
                rngState: [UInt64], datasetPath: String, datasetFingerprint: String, datasetEvents: Int,
                validationEvents: Int, smoothedLoss: Double, schedule: ScheduleProgress,
                bestValidationLoss: Double, bestStep: Int, runID: String, formatVersion: Int = Checkpoint.formatVersion,
                createdBy: String = "drummer \(DrummerVersion.string)") {
        self.configuration = configuration; self.state = state; self.groups = groups
        self.rngState = rngState; self.datasetPath = datasetPath; self.datasetFingerprint = datasetFingerprint
        self.datasetEvents = datasetEvents; self.validationEvents = validationEvents
        self.smoothedLoss = smoothedLoss; self.schedule = schedule
        self.bestValidationLoss = bestValidationLoss; self.bestStep = bestStep; self.createdBy = createdBy
        self.runID = runID; self.formatVersion = formatVersion
    }

    /// A fresh run id: 128 random bits as 32 lowercase hex digits.
    public static func newRunID() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let v = g.next() as UInt64
            let hex = String(v, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    public static func isValidRunID(_ s: String) -> Bool {
        s.utf8.count == 32 && s.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The weights held in the checkpoint.
    public func weights() throws -> LSTMWeights {
        try state.weights()
    }
}

/// An evaluation a stop request cut short, left for the resumed run to do first.
public struct PendingEvaluation: Equatable, Sendable {
    /// The loss of the evaluated step's update (the evaluation's log row holds it); nil when unknown.
    public var stepLoss: Double?
    public init(stepLoss: Double?) { self.stepLoss = stepLoss }
}

/// Why a checkpoint cannot be read or written; every case names the file.
public enum CheckpointError: Error, CustomStringConvertible, Equatable, Sendable {
    /// No file at the path.
    case missing(path: String)
    /// The file system refused (permission, a directory where a file is meant, …).
    case unreadable(path: String, reason: String)
    /// Not an HDF5 file, or an HDF5 file that is not a drummer checkpoint.
    case notACheckpoint(path: String, reason: String)
    /// A format version this drummer does not read.
    case unsupportedVersion(path: String, version: Int64)
    /// The recorded SHA-256 does not match the contents, the header is damaged, or an HDF5
    /// checksum (object header or Fletcher-32 of a dataset) failed: the bytes changed after writing.
    case corrupt(path: String, reason: String)
    /// A readable checkpoint whose contents are inconsistent or out of range (a value, a shape,
    /// a non-finite weight), naming the field.
    case invalid(path: String, field: String, reason: String)
    /// Writing failed (disk full, permission, …); the previous file at `path` is untouched.
    case writeFailed(path: String, reason: String)

    public var path: String {
        switch self {
        case .missing(let p), .unreadable(let p, _), .notACheckpoint(let p, _), .unsupportedVersion(let p, _),
             .corrupt(let p, _), .invalid(let p, _, _), .writeFailed(let p, _):
            return p
        }
    }

    public var description: String {
        switch self {
        case .missing(let p):
            return "\(p): no such checkpoint file"
        case .unreadable(let p, let r):
            return "\(p): cannot read the checkpoint: \(r)"
        case .notACheckpoint(let p, let r):
            return "\(p): not a drummer checkpoint: \(r)"
        case .unsupportedVersion(let p, let v):
            return "\(p): checkpoint format version \(v) is not supported (this drummer reads versions 1 to \(Checkpoint.formatVersion))"
        case .corrupt(let p, let r):
            return "\(p): the checkpoint is corrupt: \(r)"
        case .invalid(let p, let field, let r):
            return "\(p): \(field) \(r)"
        case .writeFailed(let p, let r):
            return "\(p): cannot write the checkpoint: \(r)"
        }
    }
}
