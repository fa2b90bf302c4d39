// Entry point. Before anything else, make sure OpenBLAS runs the fastest kernels
// this CPU supports (re-executes once when it does not; see BLASRuntime).
import DrummerCore

BLASRuntime.ensureFastKernels()
Drummer.main()
