// swift-tools-version:6.0
// drummer: a Swift toolchain from drum MIDI files to a deployable LSTM drummer.
//
// C libraries come from Debian packages and are found through pkg-config:
//   openblas (libopenblas-dev), lapacke (liblapacke-dev), hdf5 (libhdf5-dev).
// Scripts/setup installs them.
import PackageDescription

let package = Package(
    name: "drummer",
    products: [
        .executable(name: "drummer", targets: ["drummer"]),
        .library(name: "DrummerCore", targets: ["DrummerCore"]),
        .library(name: "ModelFiles", targets: ["ModelFiles"]),
        .library(name: "MIDIParse", targets: ["MIDIParse"]),
        .library(name: "Sample", targets: ["Sample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Type-safe HTML DSL for `drummer report`'s page.
        .package(url: "https://github.com/JohnSundell/Plot", from: "0.14.0"),
        // Protocol buffers for `drummer export --format onnx` (the runtime library only: the
        // message code is generated once by Scripts/gen-onnx-proto and committed).
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
    ],
    targets: [
        // C boundaries: a modulemap and, where Swift cannot import a macro, a shim.h.
        .systemLibrary(
            name: "CBLAS", pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(
            name: "CLAPACKE", pkgConfig: "lapacke",
            providers: [.apt(["liblapacke-dev"])]),
        .systemLibrary(
            name: "CHDF5", pkgConfig: "hdf5",
            providers: [.apt(["libhdf5-dev"])]),

        // The trainer's hot loops in C: elementwise cell/softmax kernels compiled per
        // instruction set (target_clones) and an AVX-512 recurrent product.
        // Optimised in debug builds too: the tests run the debug binary, and the kernels at -O0
        // made a 16-bar `humanize` take 7.6 s (0.44 s in release), most of it in one product tile.
        .target(name: "CKernels", cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))]),
        // The model's math and layout: sizes and named parameter views (ModelLayout), groups and
        // the input encoding of a hit (ModelGroups, HitEncoder, Lookback), the inference forward
        // (eval and sample), the output logits, BLAS and CKernels wrappers, softmax, seeded RNG,
        // SHA-256, version.
        .target(name: "DrummerCore", dependencies: ["CBLAS", "CLAPACKE", "CKernels"]),
        // Writing files safely: atomic files and directories (temporary + rename, never replacing
        // what the tool does not own), temporary-file sweeping, clean-up on interrupt, error text.
        .target(name: "FileOutput"),
        // The deployable model directory: Wx.bin (one per layer) / Wy.bin / model.json, its
        // manifest, checksums and validation; read by sample, humanize and eval.
        .target(name: "ModelFiles", dependencies: ["DrummerCore", "FileOutput"]),
        // Owning Swift wrappers over the HDF5 C API.
        .target(name: "HDF5Kit", dependencies: ["CHDF5", "FileOutput"]),
        // Standard MIDI File reader and writer (FileOutput only, for the words of a file error).
        .target(name: "MIDIParse", dependencies: ["FileOutput"]),
        // MIDI -> dataset: vocabulary, events, one-hot, .npy I/O, manifest.json (written, and read
        // back with its bounds checks by training and the report's reference).
        .target(name: "Encode", dependencies: ["MIDIParse", "DrummerCore", "FileOutput"]),
        // The training math and its data: the LSTM layer stack's forward and backward, its
        // scheduling on two cores, loss, optimizers, the TBPTT step, evaluation, input noise,
        // the training settings (one declaration each) and the training state. No HDF5.
        .target(name: "Train", dependencies: ["CKernels", "DrummerCore", "Encode", "MIDIParse"]),
        // Training checkpoints: the HDF5 layout of a run's state and settings, versions,
        // validation, the checkpoint directory and its lock.
        .target(name: "Checkpoints", dependencies: ["DrummerCore", "FileOutput", "HDF5Kit", "Train"]),
        // A training run: options and resume rules, the loop (log, evaluate, checkpoint, stop
        // on signals), train_log.csv, and loading a model or checkpoint for eval.
        .target(name: "TrainRun", dependencies: ["Checkpoints", "DrummerCore", "Encode", "FileOutput", "MIDIParse",
                                                 "ModelFiles", "Train"]),
        // `drummer bench`: one timing harness, the machine's FMA peak, the BLAS, training and
        // sampling benchmarks (figures, not tests).
        .target(name: "Benchmarks", dependencies: ["CKernels", "Checkpoints", "DrummerCore", "Encode", "FileOutput",
                                                   "ModelFiles", "Sample", "Train", "TrainRun"]),
        // Checkpoint -> Wx.bin / Wy.bin / model.json.
        .target(name: "Export", dependencies: ["Checkpoints", "DrummerCore", "FileOutput", "ModelFiles"]),
        // A model as a one-step ONNX graph (ONNX Runtime in DAWs, the web, mobile); the ONNX
        // message code generated from Proto/onnx-subset.proto.
        .target(name: "ONNXExport", dependencies: [
            "DrummerCore", "ModelFiles", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        ]),
        // The deployment runtime: the core (BLAS), the model directory reader and the MIDI
        // reader/writer (whose hit extraction reads primers as convert-midi reads files).
        // No Encode, HDF5 or Train.
        .target(name: "Sample", dependencies: ["DrummerCore", "FileOutput", "MIDIParse", "ModelFiles"]),
        // `drummer play`'s real-time half in C: libjack loaded with dlopen at run time (never
        // linked), the JACK process callback, and the lock-free rings between it and the sampler.
        .target(name: "CJackLive", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("m")]),
        // `drummer play`: the sampler drawing a bar ahead of the JACK clock, listening, answering.
        .target(name: "Live", dependencies: ["CJackLive", "DrummerCore", "MIDIParse", "Sample"]),
        // A JACK MIDI test client (records, sends, floods) for PlayTests, on the same loader.
        .executableTarget(name: "JackProbe", dependencies: ["CJackLive"], path: "Tests/JackProbe"),
        // `drummer report` (one self-contained HTML page: curves, piano rolls, histograms,
        // model card, audio), `drummer tab` (drum tablature) and `drummer stats` (generated
        // files against a reference). Reads train_log.csv and
        // model.json as plain files: no Train, no HDF5.
        .target(name: "Report", dependencies: [
            "MIDIParse", "DrummerCore", "Encode", "FileOutput", "ModelFiles",
            .product(name: "Plot", package: "Plot"),
        ]),

        .executableTarget(
            name: "drummer",
            dependencies: [
                "Benchmarks", "Checkpoints", "DrummerCore", "FileOutput", "MIDIParse", "ModelFiles", "Encode", "Train",
                "TrainRun", "Export", "ONNXExport", "Sample", "Report", "Live",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .testTarget(name: "CKernelsTests", dependencies: ["CKernels"]),
        .testTarget(name: "DrummerCoreTests", dependencies: ["DrummerCore", "CKernels", "FileOutput"]),
        .testTarget(name: "FileOutputTests", dependencies: ["FileOutput"]),
        .testTarget(name: "ModelFilesTests", dependencies: ["ModelFiles", "DrummerCore", "FileOutput"]),
        .testTarget(name: "HDF5KitTests", dependencies: ["HDF5Kit", "FileOutput"]),
        .testTarget(name: "MIDIParseTests", dependencies: ["MIDIParse"]),
        .testTarget(name: "EncodeTests", dependencies: ["Encode", "MIDIParse", "DrummerCore", "FileOutput"]),
        // The trainer's independent double-precision reference (test support, no product code),
        // optimized in every build: the finite-difference checks run it twice per parameter.
        .target(name: "ReferenceModel", path: "Tests/ReferenceModel", swiftSettings: [.unsafeFlags(["-O"])]),
        .testTarget(name: "TrainTests", dependencies: ["Train", "TrainRun", "Checkpoints", "DrummerCore", "Encode", "FileOutput",
                                                   "HDF5Kit", "ModelFiles", "ReferenceModel", "Sample"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "ONNXExport", "Checkpoints", "DrummerCore", "Encode", "ModelFiles", "Sample", "Train"]),
        .testTarget(name: "SampleTests", dependencies: ["Sample", "DrummerCore", "MIDIParse", "ModelFiles"]),
        .testTarget(name: "ReportTests", dependencies: ["Report", "MIDIParse", "ModelFiles"]),
        .testTarget(name: "DrummerCLITests", dependencies: ["drummer", "MIDIParse", "Checkpoints", "CKernels", "Train"]),
        // drummer play on dummy JACK servers, recorded and fed by JackProbe (built with every
        // target, as `swift build --build-tests` and `swift test` build them); LiveNoteStream.
        .testTarget(name: "PlayTests", dependencies: ["drummer", "DrummerCore", "Live", "MIDIParse", "Sample"]),
    ]
)
