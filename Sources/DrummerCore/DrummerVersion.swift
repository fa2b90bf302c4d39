// The toolchain's version, written into checkpoints, model directories and --version.
public enum DrummerVersion {
    public static let string = "0.1.0"
}
