#ifndef DRUMMER_CBLAS_SHIM_H
#define DRUMMER_CBLAS_SHIM_H
// OpenBLAS's cblas.h (found through pkg-config "openblas"); it also declares
// openblas_get_corename / openblas_set_num_threads.
#include <cblas.h>

// CPU feature probe used to pick an OpenBLAS core when OpenBLAS's own detection
// falls back to generic kernels (Debian's 0.3.21 does not know recent Intel models).
// __builtin_cpu_supports is a GCC/Clang builtin: Swift cannot call it directly.
static inline int drummer_cpu_supports_avx512_skylakex(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd")
        && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}
static inline int drummer_cpu_supports_avx2_fma(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}
static inline int drummer_cpu_supports_avx(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
#else
    return 0;
#endif
}
#endif
