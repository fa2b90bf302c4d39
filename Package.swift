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
        .library(name: "MIDIParse", targets: ["MIDIParse"]),
        .library(name: "Sample", targets: ["Sample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Type-safe HTML DSL for `drummer report`'s page.
        .package(url: "https://github.com/JohnSundell/Plot", from: "0.14.0"),
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
        .target(name: "CKernels"),
        // Shared core: BLAS and CKernels wrappers, weight layout, the inference forward step
        // (eval and sample), softmax, seeded RNG, model directories.
        .target(name: "DrummerCore", dependencies: ["CBLAS", "CLAPACKE", "CKernels"]),
        // Owning Swift wrappers over the HDF5 C API.
        .target(name: "HDF5Kit", dependencies: ["CHDF5"]),
        // Standard MIDI File reader and writer (no dependencies).
        .target(name: "MIDIParse"),
        // MIDI -> dataset: vocabulary, events, one-hot, .npy I/O.
        .target(name: "Encode", dependencies: ["MIDIParse", "DrummerCore"]),
        // Training checkpoints: what a run stores (state, hyperparameters and their ranges,
        // vocabulary, dataset identity), its HDF5 layout, versions and validation.
        .target(name: "Checkpoints", dependencies: ["DrummerCore", "HDF5Kit"]),
        // The LSTM layer's forward and backward, its scheduling on two cores, loss,
        // optimizers, the TBPTT loop, evaluation.
        .target(name: "Train", dependencies: ["CKernels", "Checkpoints", "DrummerCore", "Encode", "MIDIParse"]),
        // `drummer bench`: one timing harness, the machine's FMA peak, the BLAS, training and
        // sampling benchmarks (figures, not tests).
        .target(name: "Benchmarks", dependencies: ["CKernels", "Checkpoints", "DrummerCore", "Encode", "Sample", "Train"]),
        // Checkpoint -> Wx.bin / Wy.bin / model.json.
        .target(name: "Export", dependencies: ["Checkpoints", "DrummerCore"]),
        // The deployment runtime: the core (BLAS) and the MIDI reader/writer (whose hit
        // extraction reads primers as convert-midi reads files). No Encode, HDF5 or Train.
        .target(name: "Sample", dependencies: ["DrummerCore", "MIDIParse"]),
        // `drummer report` (one self-contained HTML page: curves, piano rolls, histograms,
        // model card, audio), `drummer tab` (drum tablature) and `drummer stats` (generated
        // files against a reference). Reads train_log.csv and
        // model.json as plain files: no Train, no HDF5.
        .target(name: "Report", dependencies: [
            "MIDIParse", "DrummerCore", "Encode",
            .product(name: "Plot", package: "Plot"),
        ]),

        .executableTarget(
            name: "drummer",
            dependencies: [
                "Benchmarks", "Checkpoints", "DrummerCore", "MIDIParse", "Encode", "Train", "Export", "Sample", "Report",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .testTarget(name: "CKernelsTests", dependencies: ["CKernels"]),
        .testTarget(name: "DrummerCoreTests", dependencies: ["DrummerCore"]),
        .testTarget(name: "HDF5KitTests", dependencies: ["HDF5Kit"]),
        .testTarget(name: "MIDIParseTests", dependencies: ["MIDIParse"]),
        .testTarget(name: "EncodeTests", dependencies: ["Encode", "MIDIParse", "DrummerCore"]),
        .testTarget(name: "TrainTests", dependencies: ["Train", "Checkpoints", "DrummerCore", "Encode", "HDF5Kit", "Sample"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "Checkpoints", "DrummerCore"]),
        .testTarget(name: "SampleTests", dependencies: ["Sample", "DrummerCore", "MIDIParse"]),
        .testTarget(name: "ReportTests", dependencies: ["Report", "MIDIParse"]),
        .testTarget(name: "DrummerCLITests", dependencies: ["drummer"]),
    ]
)
