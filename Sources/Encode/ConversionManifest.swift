// manifest.json of a converted dataset: sources, settings, statistics, skipped and
// recovered files. Keys are only ever added, never renamed (users' scripts read them).
// Nothing in it depends on the time or on the working directory: DIR is recorded as given
// and every source path is relative to it, so two runs give identical bytes.

public struct ConversionManifest: Codable, Equatable, Sendable {
    public struct Settings: Codable, Equatable, Sendable {
        public var channel: String
        public var ppq: Int
        public var quantize: Int?
        public var maxDelta: Int?
        public var noteMap: String
        public var onehot: Bool
        public var validationFraction: Double
        /// True with `--lenient` (kept beside `parse_mode` for older scripts).
        public var lenient: Bool
        /// "safe" (the default), "strict" or "lenient".
        public var parseMode: String
        /// "time" (the default) or "note": the order of the hits at one onset (absent in
        /// manifests written before the option existed: "time").
        public var onsetOrder: String?

        enum CodingKeys: String, CodingKey {
            case channel, ppq, quantize, onehot, lenient
            case parseMode = "parse_mode"
            case onsetOrder = "onset_order"
            case maxDelta = "max_delta"
            case noteMap = "note_map"
            case validationFraction = "validation_fraction"
        }
    }

    public struct SourceFile: Codable, Equatable, Sendable {
        /// Path relative to the source directory.
        public var path: String
        /// "training" or "validation".
        public var split: String
        public var hits: Int
        /// Index of the file's first hit in its split's events.npy.
        public var offset: Int
        /// Channel(s) the hits came from: "9", "all" or an index.
        public var channel: String
        /// The meter most of the file's hits are in ("4/4" when the file has no time signature).
        public var meter: String
        /// Recovered defects ("byte N: what was wrong (what was done)").
        public var warnings: [String]
    }

    public struct SkippedFile: Codable, Equatable, Sendable {
        public var path: String
        /// Why: "byte N: …", "truncated at byte N: expected …", "not a MIDI file: starts with …",
        /// "cannot read: permission denied", "not a regular file (a directory)", ...
        public var error: String
        /// "not MIDI", "empty", "truncated", "malformed", "unreadable" or "out of range".
        public var kind: String
    }

    /// A file read with defects recovered (safe or lenient mode), and what was done about each.
    public struct RecoveredFile: Codable, Equatable, Sendable {
        public var path: String
        public var warnings: [String]
    }

    public struct Statistics: Codable, Equatable, Sendable {
        public var files: Int
        public var hits: Int
        public var uniqueNotes: Int
        public var uniqueTicks: Int
        public var minHitsPerFile: Int
        public var maxHitsPerFile: Int
        public var meanHitsPerFile: Double
        /// Note number -> hits, for notes outside General MIDI percussion (35...81).
        public var notesOutsideGMPercussion: [String: Int]

        enum CodingKeys: String, CodingKey {
            case files, hits
            case uniqueNotes = "unique_notes"
            case uniqueTicks = "unique_ticks"
            case minHitsPerFile = "min_hits_per_file"
            case maxHitsPerFile = "max_hits_per_file"
            case meanHitsPerFile = "mean_hits_per_file"
            case notesOutsideGMPercussion = "notes_outside_gm_percussion"
        }
    }

    public struct Validation: Codable, Equatable, Sendable {
        public var files: Int
        /// Hits kept (those whose note and tick are in the training vocabulary).
        public var hits: Int
        public var droppedHits: Int
        /// Out-of-vocabulary note numbers -> hits dropped.
        public var droppedNotes: [String: Int]
        /// Out-of-vocabulary tick values -> hits dropped.
        public var droppedTicks: [String: Int]

        enum CodingKeys: String, CodingKey {
            case files, hits
            case droppedHits = "dropped_hits"
            case droppedNotes = "dropped_notes"
            case droppedTicks = "dropped_ticks"
        }
    }

    /// "drummer convert-midi".
    public var tool: String
    public var version: String
    /// The source directory as given on the command line.
    public var source: String
    public var settings: Settings
    public var files: [SourceFile]
    public var skipped: [SkippedFile]
    /// Files converted with recovered defects (each also in `files`, with its warnings).
    public var recovered: [RecoveredFile]
    public var statistics: Statistics
    public var validation: Validation?
    /// Files read cleanly that hold no hit (no NOTE ON with velocity > 0 on the selected
    /// channels): converted to nothing, each named (absent in manifests written before).
    public var noHits: [String]? = []
    /// Output file -> array shape.
    public var outputs: [String: [Int]]
    /// Array file -> what its rows hold and in which units (absent in manifests written before
    /// velocities.npy and positions.npy existed).
    /// (Every key sorts after "files": `encodedJSON` splices the file list in first.)
    public var formats: [String: String]? = ConversionManifest.arrayFormats

    enum CodingKeys: String, CodingKey {
        case tool, version, source, settings, files, skipped, recovered, statistics, validation, outputs, formats
        case noHits = "no_hits"
    }

    /// The `formats` entry of every manifest this version writes.
    static let arrayFormats: [String: String] = [
        "events.npy": "int32 [N, 2] per hit: note index (vocab.json ix_to_note), index of the ticks since the previous hit (ix_to_tick)",
        "velocities.npy": "int32 [N] per hit: MIDI note-on velocity 1...127",
        "positions.npy": "int32 [N, 2] per hit: ticks from the bar line of its bar, length of that bar in ticks; at settings.ppq ticks per quarter note, after settings.quantize; bars from the file's time signatures (4/4 without one), files[].meter the meter most of its hits are in",
        "onsets.npy": "int32 [N] per hit: ticks from its file's start, at settings.ppq after settings.quantize (exact where a validation hit before it was left out of events.npy, or a delta clamped by settings.max_delta)",
        "X.npy": "float32 [N, notes + ticks] per hit (--onehot): the original's one-hot rows, note | tick",
    ]
}
