// See include/drummer_kernels.h. The elementwise loops are written as plain scalar
// code without branches so that the compiler vectorises every level's variant; the math
// is the Cephes single-precision expf/tanhf (relative error about 2 ulp). Sums run in one
// fixed order in every variant (index order, or fixed lanes and a fixed tree), so the
// AVX-512 and AVX2 variants give the same bits and the baseline differs only by FMA
// contraction.
#include "drummer_kernels.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

// The correctly rounded square root as an instruction that vectorises: sqrtf would keep a
// scalar call for errno on negative inputs.
#if defined(__has_builtin)
#if __has_builtin(__builtin_elementwise_sqrt)
#define SQRT_EXACT(x) __builtin_elementwise_sqrt(x)
#endif
#endif
#ifndef SQRT_EXACT
#define SQRT_EXACT(x) sqrtf(x)
#endif

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define DRUMMER_X86 1
#include <immintrin.h>
#endif
#include <stdlib.h>

// MARK: instruction sets

// Each elementwise kernel is compiled three times from one body (x86-64-v4: AVX-512;
// x86-64-v3: AVX2 + FMA; the baseline) and the recurrent product twice (AVX-512, AVX2 + FMA);
// the table of the level in use is picked once: the CPU's, or a lower one DRUMMER_MAX_ISA
// names, so that an AVX-512 machine runs and tests what an AVX2-only one runs. (Explicit
// variants rather than target_clones, whose choice the loader makes and nothing can lower.)
// The levels' features, spelled out: target("arch=x86-64-v4") would also tune for that CPU,
// whose tuning prefers 256-bit vectors, and halve the width of the elementwise loops (the
// loader's clones, which these replace, used 512).
#ifdef DRUMMER_X86
#define V3_FEATURES "avx2,fma,bmi,bmi2,f16c,lzcnt,movbe,popcnt"
#define V4 __attribute__((target(V3_FEATURES ",avx512f,avx512bw,avx512cd,avx512dq,avx512vl")))
#define V3 __attribute__((target(V3_FEATURES)))
#endif

int drummer_kernels_cpu_isa(void) {
#ifdef DRUMMER_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return DRUMMER_ISA_AVX512;
    if (__builtin_cpu_supports("x86-64-v3")) return DRUMMER_ISA_AVX2;
#endif
    return DRUMMER_ISA_BASELINE;
}

int drummer_kernels_isa_setting(void) {
    const char *v = getenv("DRUMMER_MAX_ISA");
    if (v == NULL || v[0] == 0 || strcmp(v, "avx512") == 0) return DRUMMER_ISA_AVX512;
    if (strcmp(v, "avx2") == 0) return DRUMMER_ISA_AVX2;
    if (strcmp(v, "baseline") == 0) return DRUMMER_ISA_BASELINE;
    return -1;
}

int drummer_kernels_isa(void) {
    // Computed once; first callers racing store the same value.
    static int cached = -1;
    int isa = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (isa < 0) {
        const int cpu = drummer_kernels_cpu_isa(), cap = drummer_kernels_isa_setting();
        isa = cap >= 0 && cap < cpu ? cap : cpu;
        __atomic_store_n(&cached, isa, __ATOMIC_RELAXED);
    }
    return isa;
}

// MARK: scalar math (inlined into each level's variant, vectorised there)

// A kernel's one body, inlined into each level's variant (ELEMENTWISE_VARIANTS below).
#define BODY static inline __attribute__((always_inline))

static inline __attribute__((always_inline)) float exp_c(float x) {
    x = x < -87.3f ? -87.3f : x;
    x = x > 88.4f ? 88.4f : x;
    // n = round(x·log2 e) with the 1.5·2^23 trick; r = x − n·ln 2 in two parts.
    const float magic = 12582912.0f;
    float shifted = x * 1.44269504f + magic;
    float n = shifted - magic;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float z = r * r;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float e = p * z + r + 1.0f;
    // 2^n: the low bits of `shifted` hold n + 2^22; move n + 127 into the exponent field.
    uint32_t bits;
    memcpy(&bits, &shifted, 4);
    uint32_t sbits = (bits - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &sbits, 4);
    return e * scale;
}

static inline __attribute__((always_inline)) float sigmoid_c(float x) {
    return 1.0f / (1.0f + exp_c(-x));
}

static inline __attribute__((always_inline)) float tanh_c(float x) {
    float big = 1.0f - 2.0f / (1.0f + exp_c(x + x));
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    float small = p * z * x + x;
    return z < 0.390625f ? small : big;  // |x| < 0.625
}

// MARK: elementwise kernels

// Row sums in registers: 128 columns as eight 16-float vectors (on AVX-512 eight registers,
// on AVX2 sixteen, on the baseline thirty-two halves that the compiler spills), each source
// row read once and the sum written once; the columns past the last full 128 take a plain
// loop. The adds run in the same order either way.
typedef float vf16 __attribute__((vector_size(64)));
enum { ROW_TILE = 128 };

// (Macros, not functions: a function taking or returning a 64-byte vector would change the
// calling convention of the variants without AVX-512.)
#define ROW_TILE_LOAD(acc, p) do { for (int v_ = 0; v_ < 8; v_++) memcpy(&acc[v_], (p) + 16 * v_, 64); } while (0)
#define ROW_TILE_ADD(acc, p) do { \
    for (int v_ = 0; v_ < 8; v_++) { vf16 t_; memcpy(&t_, (p) + 16 * v_, 64); acc[v_] += t_; } } while (0)
#define ROW_TILE_STORE(p, acc) do { for (int v_ = 0; v_ < 8; v_++) memcpy((p) + 16 * v_, &acc[v_], 64); } while (0)

// A hint that the 64-byte line at p is read (or written) soon, into L2: no effect on any value.
#define PREFETCH_LINE(p, forWriting) __builtin_prefetch((p), (forWriting), 2)

BODY void input_block_body(int n, const float *restrict w, const int32_t *restrict rows, int k,
                           const float *restrict bias, float *restrict out, float *next) {
    // out = ((r0 + r1) + ... + r(k-1)) + bias, summed in that order, 128 columns at a time;
    // each tile's lines of `next` (if not NULL) prefetched for writing as the tile is summed.
    int j0 = 0;
    for (; j0 + ROW_TILE <= n; j0 += ROW_TILE) {
        if (next)
            for (int l = 0; l < ROW_TILE; l += 16) PREFETCH_LINE(next + j0 + l, 1);
        vf16 acc[8];
        ROW_TILE_LOAD(acc, w + (size_t)rows[0] * n + j0);
        for (int q = 1; q < k; q++) ROW_TILE_ADD(acc, w + (size_t)rows[q] * n + j0);
        ROW_TILE_ADD(acc, bias + j0);
        ROW_TILE_STORE(out + j0, acc);
    }
    if (next)
        for (int l = j0; l < n; l += 16) PREFETCH_LINE(next + l, 1);
    for (int j = j0; j < n; j++) {
        float sum = w[(size_t)rows[0] * n + j];
        for (int q = 1; q < k; q++) sum += w[(size_t)rows[q] * n + j];
        out[j] = sum + bias[j];
    }
}

void drummer_scatter_rows_order(int count, const int32_t *restrict rows, int k, int wrows,
                                int32_t *restrict start, int32_t *restrict order) {
    // A stable counting sort of the count·k (w row, source row) pairs by w row; a negative
    // entry is no pair.
    for (int i = 0; i <= wrows; i++) start[i] = 0;
    for (int i = 0; i < count * k; i++)
        if (rows[i] >= 0) start[rows[i] + 1]++;
    for (int i = 0; i < wrows; i++) start[i + 1] += start[i];
    for (int i = 0; i < count * k; i++)
        if (rows[i] >= 0) order[start[rows[i]]++] = i / k;
    // start[w] now holds the end of w's run: shift back to starts.
    for (int i = wrows; i > 0; i--) start[i] = start[i - 1];
    start[0] = 0;
}

BODY void scatter_rows_body(int n, const float *restrict x, int wrows, const int32_t *restrict start,
                            const int32_t *restrict order, float *restrict y, int overwrite) {
    // overwrite: y's old values are not read, each row starts from +0 (the bits of zeroing y
    // first, without that pass over it).
    for (int w = 0; w < wrows; w++) {
        const int first = start[w], last = start[w + 1];
        float *restrict dst = y + (size_t)w * n;
        if (first == last) {
            if (overwrite) memset(dst, 0, (size_t)n * 4);
            continue;
        }
        int j0 = 0;
        for (; j0 + ROW_TILE <= n; j0 += ROW_TILE) {
            vf16 acc[8];
            if (overwrite) {
                for (int v = 0; v < 8; v++) acc[v] = (vf16){0};
            } else {
                ROW_TILE_LOAD(acc, dst + j0);
            }
            for (int i = first; i < last; i++) ROW_TILE_ADD(acc, x + (size_t)order[i] * n + j0);
            ROW_TILE_STORE(dst + j0, acc);
        }
        for (int j = j0; j < n; j++) {
            float sum = overwrite ? 0.0f : dst[j];
            for (int i = first; i < last; i++) sum += x[(size_t)order[i] * n + j];
            dst[j] = sum;
        }
    }
}

BODY void accumulate_body(int n, const float *restrict x, float *restrict y) {
    for (int j = 0; j < n; j++) y[j] += x[j];
}

// out may be a: each element is read before it is written, at the same index.
BODY void difference_body(int n, const float *a, const float *restrict b, float *out) {
    for (int j = 0; j < n; j++) out[j] = a[j] - b[j];
}

// One row of a dropout mask (Train/Dropout.swift's scale(row:unit:), the same integers):
// SplitMix64's finaliser of key ^ j, the unit dropped when its top 24 bits are below threshold.
// Swift's loop ran one unit at a time; here the 64-bit multiplies run on lanes (AVX-512DQ's
// vpmullq, AVX2 from 32-bit products).
BODY void dropout_row_body(int n, uint64_t key, uint32_t threshold, float keep, float *restrict out) {
    for (int j = 0; j < n; j++) {
        uint64_t z = (key ^ (uint64_t)j) + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        out[j] = (uint32_t)(z >> 40) < threshold ? 0.0f : keep;
    }
}

// The optimizer's Adam loop, vectorised: Swift's scalar loop (Optimizer.swift) compiled to one
// element at a time, about 13 cycles a parameter, 6% of a step of the shipped recipe. Each
// operation is rounded on its own as there (contraction off; IEEE division and square root are
// exact in every width), so every variant gives the scalar loop's bits. The clamp is Swift's
// min(max(g, lo), hi), NaN passing through. (A GCC build needs -ffp-contract=off for the same bits.)
// `adding` (a constant where it is inlined): the gradient is grad + addend, the sum the other
// stream group's gradient made when it was added into grad first, without that pass's write
// and second read of the gradient (2.2M parameters a step in the shipped model).
BODY void adam_loop(long n, float *restrict p, const float *restrict grad, const float *restrict addend,
                    int adding, float *restrict m, float *restrict v, float lr, float lo, float hi, float b1,
                    float b2, float d1, float d2, float c1, float c2, float eps) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    for (long k = 0; k < n; k++) {
        float g = adding ? grad[k] + addend[k] : grad[k];
        g = lo >= g ? lo : g;
        g = hi < g ? hi : g;
        const float mk = b1 * m[k] + d1 * g;
        const float vk = b2 * v[k] + d2 * (g * g);
        m[k] = mk;
        v[k] = vk;
        p[k] -= lr * (mk / c1) / (SQRT_EXACT(vk / c2) + eps);
    }
}

BODY void adam_body(long n, float *restrict p, const float *restrict grad, const float *restrict addend,
                    float *restrict m, float *restrict v, float lr, float lo, float hi, float b1, float b2,
                    float d1, float d2, float c1, float c2, float eps) {
    if (addend) adam_loop(n, p, grad, addend, 1, m, v, lr, lo, hi, b1, b2, d1, d2, c1, c2, eps);
    else adam_loop(n, p, grad, NULL, 0, m, v, lr, lo, hi, b1, b2, d1, d2, c1, c2, eps);
}

void drummer_pack_panels(int K, int N, const float *W, int ldw, int transposed, float *out) {
    const int panels = (N + 31) / 32;
    for (int p = 0; p < panels; p++) {
        float *panel = out + (size_t)p * K * 32;
        const int width = N - p * 32 < 32 ? N - p * 32 : 32;
        if (!transposed) {
            // Row k of the panel: 32 contiguous floats of W's row k.
            for (int k = 0; k < K; k++) {
                memcpy(panel + (size_t)k * 32, W + (size_t)k * ldw + p * 32, (size_t)width * 4);
                for (int j = width; j < 32; j++) panel[(size_t)k * 32 + j] = 0.0f;
            }
        } else {
            // Column j of the panel is row p·32 + j of S, read in blocks of 16 along k so that the
            // 32 rows are read as 32 sequential streams and the panel written row by row.
            for (int k0 = 0; k0 < K; k0 += 16) {
                const int kn = K - k0 < 16 ? K - k0 : 16;
                for (int j = 0; j < 32; j++) {
                    const float *row = W + (size_t)(p * 32 + j) * ldw + k0;
                    float *col = panel + (size_t)k0 * 32 + j;
                    if (j < width) {
                        for (int k = 0; k < kn; k++) col[(size_t)k * 32] = row[k];
                    } else {
                        for (int k = 0; k < kn; k++) col[(size_t)k * 32] = 0.0f;
                    }
                }
            }
        }
    }
}

// Three passes instead of one loop over the units: σ of the f, i and o blocks (3H contiguous
// pre-activations), tanh of the g block, then c, tanh(c) and h. One unit's chain (an exp and a
// division, the cell, then tanh(c)'s exp and division) is about 180 cycles deep; in one loop
// the out-of-order window held two lanes' chains and the loop ran at that latency (about 120
// cycles a 16-unit lane on AVX-512 where its arithmetic issues in 70). The passes' chains are a
// third as deep, so more lanes run at once: a row at H = 200 and 256 takes 27% and 17% less
// time on AVX-512, a third less on AVX2 (H = 200's 8 units past the last lane no longer run
// one at a time). Each value takes the same operations, so the same bits.
BODY void cell_forward_body(int H, float *restrict gates, const float *restrict cPrev,
                            float *restrict cNew, float *restrict tanhC, float *restrict hNew) {
    for (int j = 0; j < 3 * H; j++) gates[j] = sigmoid_c(gates[j]);
    float *restrict g = gates + 3 * H;
    for (int j = 0; j < H; j++) g[j] = tanh_c(g[j]);
    const float *restrict f = gates, *restrict i = gates + H, *restrict o = gates + 2 * H;
    for (int j = 0; j < H; j++) {
        float c = f[j] * cPrev[j] + i[j] * g[j];
        float tc = tanh_c(c);
        cNew[j] = c;
        tanhC[j] = tc;
        hNew[j] = o[j] * tc;
    }
}

// The gradient of one unit: reads its four gate values and writes its four gate gradients
// (the same expressions, so the same bits, in the lanes and in the tail).
#define CELL_BACKWARD_UNIT(fj, ij, oj, gj, dhOutJ, dhNextJ, tc, cPrevJ, dcJ, dfOut, diOut, doOut, dgOut) do { \
        float dh_ = (dhOutJ) + (dhNextJ); \
        float dcj_ = (dcJ) + dh_ * (oj) * (1.0f - (tc) * (tc)); \
        doOut = dh_ * (tc) * (oj) * (1.0f - (oj)); \
        dfOut = dcj_ * (cPrevJ) * (fj) * (1.0f - (fj)); \
        diOut = dcj_ * (gj) * (ij) * (1.0f - (ij)); \
        dgOut = dcj_ * (ij) * (1.0f - (gj) * (gj)); \
        dcJ = dcj_ * (fj); \
    } while (0)

BODY void cell_backward_body(int H, const float *acts, const float *restrict cPrev,
                             const float *restrict tanhC, const float *restrict dhOut,
                             const float *restrict dhNext, float *restrict dc, float *dGates,
                             const float *next) {
    // dGates may be acts (the trainer writes the gradients over the activations, which nothing
    // reads after this): each 16 units' gate values are copied out before their gradients are
    // written, so the lanes need no assumption about the two.
    int j0 = 0;
    for (; j0 + 16 <= H; j0 += 16) {
        if (next)
            for (int q = 0; q < 4; q++) PREFETCH_LINE(next + q * H + j0, 0);
        float f[16], i[16], o[16], g[16], df[16], di[16], dO[16], dg[16];
        memcpy(f, acts + j0, 64);
        memcpy(i, acts + H + j0, 64);
        memcpy(o, acts + 2 * H + j0, 64);
        memcpy(g, acts + 3 * H + j0, 64);
        for (int l = 0; l < 16; l++)
            CELL_BACKWARD_UNIT(f[l], i[l], o[l], g[l], dhOut[j0 + l], dhNext[j0 + l], tanhC[j0 + l], cPrev[j0 + l],
                               dc[j0 + l], df[l], di[l], dO[l], dg[l]);
        memcpy(dGates + j0, df, 64);
        memcpy(dGates + H + j0, di, 64);
        memcpy(dGates + 2 * H + j0, dO, 64);
        memcpy(dGates + 3 * H + j0, dg, 64);
    }
    if (next && j0 < H)
        for (int q = 0; q < 4; q++) PREFETCH_LINE(next + q * H + j0, 0);
    for (int j = j0; j < H; j++) {
        const float fj = acts[j], ij = acts[H + j], oj = acts[2 * H + j], gj = acts[3 * H + j];
        float df, di, dO, dg;
        CELL_BACKWARD_UNIT(fj, ij, oj, gj, dhOut[j], dhNext[j], tanhC[j], cPrev[j], dc[j], df, di, dO, dg);
        dGates[j] = df; dGates[H + j] = di; dGates[2 * H + j] = dO; dGates[3 * H + j] = dg;
    }
}

// max(y[0..<n]) as the loop `m = y[j] > m ? y[j] : m` from m = y[0] finds it (a NaN after y[0]
// is passed over, a NaN y[0] is the result), on 16 lanes at once: that loop, one element at a
// time, was half of a softmax's time. Lanes and loop agree but for which of +0 and −0 wins a
// tie, and y − m, the only use of m with e^(y − m) and m + log s, is the same for either.
static inline __attribute__((always_inline)) float max_of(const float *restrict y, int n) {
    float m = y[0];
    int j = 1;
    if (n > 16) {
        float lanes[16];
        for (int l = 0; l < 16; l++) lanes[l] = y[0];
        for (; j + 16 <= n; j += 16)
            for (int l = 0; l < 16; l++) lanes[l] = y[j + l] > lanes[l] ? y[j + l] : lanes[l];
        for (int l = 0; l < 16; l++) m = lanes[l] > m ? lanes[l] : m;
    }
    for (; j < n; j++) m = y[j] > m ? y[j] : m;
    return m;
}

// Max, shift and exponentiate in place; returns log Σ e^(y − max) + max.
static inline __attribute__((always_inline)) float log_sum_exp_in_place(float *restrict y, int n, float *sum) {
    const float m = max_of(y, n);
    for (int j = 0; j < n; j++) y[j] = exp_c(y[j] - m);
    // Σ y on 16 lanes, lane l summing y[l], y[l + 16], … in order, then the lanes as a fixed
    // tree: the same adds at every level (vector width only changes how many lanes one
    // instruction holds), where one running sum was a chain of n dependent adds.
    float lanes[16] = {0};
    int j = 0;
    for (; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++) lanes[l] += y[j + l];
    for (int l = 0; j + l < n; l++) lanes[l] += y[j + l];
    for (int w = 8; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) lanes[l] += lanes[l + w];
    const float s = lanes[0];
    *sum = s;
    return m + logf(s);
}

BODY float negative_log_likelihood_body(float *y, int n, int target) {
    float yt = y[target], s;
    return log_sum_exp_in_place(y, n, &s) - yt;
}

BODY float softmax_cross_entropy_body(float *y, int n, int target, float scale) {
    float yt = y[target], s;
    float loss = log_sum_exp_in_place(y, n, &s) - yt;
    float k = scale / s;
    for (int j = 0; j < n; j++) y[j] *= k;
    y[target] -= scale;
    return loss;
}

// MARK: recurrent product

#ifdef DRUMMER_X86
// Tiles of MR rows × 32 columns (two zmm accumulators per row, 16 in all), K unblocked:
// W rows are read contiguously 32 floats at a time; A is broadcast one element at a time.
// Columns past N are masked, rows past M take the short-tile loop.
enum { MR = 8 };

// acc[r] += A[r, k]·W[k, 0..<16·halves] for r < rows, k < K. Inlined into `tile` with
// constant rows (MR) and halves (2, or 1 when at most 16 columns are left, so that a
// narrow last tile does no FMAs on zeros), and for the short tile.
__attribute__((target("avx512f"), always_inline))
static inline void accumulate_rows(int rows, int halves, int K, const float *A, int lda, const float *W,
                                   int ldw, __mmask16 m0, __mmask16 m1, __m512 acc[MR][2]) {
    for (int k = 0; k < K; k++) {
        const float *w = W + (size_t)k * ldw;
        // W's row k + 8 (1 KB ahead in a panel): from L3, 16 rows × 256 × 1024 ran 107 GFLOP/s
        // packed and 77 in place without it, 118 and 105 with it (Emerald Rapids core; the
        // same from L2). A prefetch past the end of W is dropped, never a fault.
        _mm_prefetch((const char *)(w + 8 * (size_t)ldw), _MM_HINT_T0);
        _mm_prefetch((const char *)(w + 8 * (size_t)ldw + 16), _MM_HINT_T0);
        __m512 w0 = _mm512_maskz_loadu_ps(m0, w);
        __m512 w1 = halves == 2 ? _mm512_maskz_loadu_ps(m1, w + 16) : _mm512_setzero_ps();
        for (int r = 0; r < rows; r++) {
            __m512 a = _mm512_set1_ps(A[(size_t)r * lda + k]);
            acc[r][0] = _mm512_fmadd_ps(a, w0, acc[r][0]);
            if (halves == 2) acc[r][1] = _mm512_fmadd_ps(a, w1, acc[r][1]);
        }
    }
}

__attribute__((target("avx512f")))
static inline void tile(int mr, int K, const float *A, int lda, const float *W, int ldw,
                        __mmask16 m0, __mmask16 m1, float *C, int ldc, int accumulate) {
    __m512 acc[MR][2];
    for (int r = 0; r < MR; r++) { acc[r][0] = _mm512_setzero_ps(); acc[r][1] = _mm512_setzero_ps(); }
    if (mr == MR && m1 != 0) {
        accumulate_rows(MR, 2, K, A, lda, W, ldw, m0, m1, acc);
    } else if (mr == MR) {
        accumulate_rows(MR, 1, K, A, lda, W, ldw, m0, m1, acc);
    } else {
        accumulate_rows(mr, m1 != 0 ? 2 : 1, K, A, lda, W, ldw, m0, m1, acc);
    }
    for (int r = 0; r < mr; r++) {
        float *c = C + (size_t)r * ldc;
        if (accumulate) {
            acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_maskz_loadu_ps(m0, c));
            acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_maskz_loadu_ps(m1, c + 16));
        }
        _mm512_mask_storeu_ps(c, m0, acc[r][0]);
        _mm512_mask_storeu_ps(c + 16, m1, acc[r][1]);
    }
}

// C = A·W (or C += A·W) a 32-column tile of C at a time: the K × 32 operand of column tile p
// starts at W + p·panelStep with its rows ldw floats apart. W in place: panelStep 32 and W's
// own ldw. W packed by drummer_pack_panels: panelStep 32·K and ldw 32, each panel one
// sequential 128·K-byte stream, where the rows of W in place, 4·ldw bytes apart, each start a
// new page the hardware prefetcher does not follow into (from L3, 16 rows × 256 × 1024 packed
// run 118 GFLOP/s on an Emerald Rapids core, in place 105, both with accumulate_rows' prefetch;
// from L2 135–148). The same tiles and sums either way: the same bits.
__attribute__((target("avx512f")))
static void gemm_tiles_avx512(int M, int N, int K, const float *A, int lda, const float *W, size_t panelStep, int ldw,
                       float *C, int ldc, int accumulate) {
    for (int n0 = 0, p = 0; n0 < N; n0 += 32, p++) {
        int left = N - n0;
        __mmask16 m0 = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
        __mmask16 m1 = left >= 32 ? (__mmask16)0xFFFF : left <= 16 ? (__mmask16)0 : (__mmask16)((1u << (left - 16)) - 1);
        const float *panel = W + (size_t)p * panelStep;
        for (int r0 = 0; r0 < M; r0 += MR) {
            int mr = M - r0 < MR ? M - r0 : MR;
            tile(mr, K, A + (size_t)r0 * lda, lda, panel, ldw, m0, m1, C + (size_t)r0 * ldc + n0, ldc, accumulate);
        }
    }
}

// The same product on AVX2 + FMA (16 ymm registers): tiles of MR2 rows × 16 columns (two ymm
// accumulators per row, 12 in all), each a half of the AVX-512 kernel's 32-column panel, so
// both read one packing. Every element is the same chain as there, Σ_k A[r, k]·W[k, n] by FMA
// in k order from zero, then + C when accumulating: the two kernels give the same bits.
enum { MR2 = 6 };

__attribute__((target("avx2,fma"), always_inline))
static inline void accumulate_rows_avx2(int rows, int K, const float *A, int lda, const float *W, int ldw,
                                        __m256i m0, __m256i m1, int masked, __m256 acc[MR2][2]) {
    for (int k = 0; k < K; k++) {
        const float *w = W + (size_t)k * ldw;
        _mm_prefetch((const char *)(w + 8 * (size_t)ldw), _MM_HINT_T0);
        __m256 w0 = masked ? _mm256_maskload_ps(w, m0) : _mm256_loadu_ps(w);
        __m256 w1 = masked ? _mm256_maskload_ps(w + 8, m1) : _mm256_loadu_ps(w + 8);
        for (int r = 0; r < rows; r++) {
            __m256 a = _mm256_broadcast_ss(A + (size_t)r * lda + k);
            acc[r][0] = _mm256_fmadd_ps(a, w0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(a, w1, acc[r][1]);
        }
    }
}

// A tile of `rows` (≤ MR2, a constant where it is inlined) rows; `masked` loads and stores
// only the columns the masks select (the last strip of N).
__attribute__((target("avx2,fma"), always_inline))
static inline void tile_avx2(int rows, int K, const float *A, int lda, const float *W, int ldw, __m256i m0,
                             __m256i m1, int masked, float *C, int ldc, int accumulate) {
    __m256 acc[MR2][2];
    for (int r = 0; r < MR2; r++) { acc[r][0] = _mm256_setzero_ps(); acc[r][1] = _mm256_setzero_ps(); }
    accumulate_rows_avx2(rows, K, A, lda, W, ldw, m0, m1, masked, acc);
    for (int r = 0; r < rows; r++) {
        float *c = C + (size_t)r * ldc;
        if (masked) {
            if (accumulate) {
                acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_maskload_ps(c, m0));
                acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_maskload_ps(c + 8, m1));
            }
            _mm256_maskstore_ps(c, m0, acc[r][0]);
            _mm256_maskstore_ps(c + 8, m1, acc[r][1]);
        } else {
            if (accumulate) {
                acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(c));
                acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(c + 8));
            }
            _mm256_storeu_ps(c, acc[r][0]);
            _mm256_storeu_ps(c + 8, acc[r][1]);
        }
    }
}

// One row tile with its row count made a constant, so the accumulators stay in registers.
__attribute__((target("avx2,fma")))
static void row_tile_avx2(int rows, int K, const float *A, int lda, const float *W, int ldw, __m256i m0, __m256i m1,
                          int masked, float *C, int ldc, int accumulate) {
#define ROWS_CASE(n) case n: \
    if (masked) tile_avx2(n, K, A, lda, W, ldw, m0, m1, 1, C, ldc, accumulate); \
    else tile_avx2(n, K, A, lda, W, ldw, m0, m1, 0, C, ldc, accumulate); \
    break;
    switch (rows) { ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5) ROWS_CASE(6) default: break; }
#undef ROWS_CASE
}

// gemm_tiles_avx512's loops over 16-column strips: strip s is half s % 2 of panel s / 2.
__attribute__((target("avx2,fma")))
static void gemm_tiles_avx2(int M, int N, int K, const float *A, int lda, const float *W, size_t panelStep, int ldw,
                            float *C, int ldc, int accumulate) {
    for (int n0 = 0; n0 < N; n0 += 16) {
        const int left = N - n0, masked = left < 16;
        int lanes[16];
        for (int j = 0; j < 16; j++) lanes[j] = j < left ? -1 : 0;
        const __m256i m0 = _mm256_loadu_si256((const __m256i *)lanes), m1 = _mm256_loadu_si256((const __m256i *)(lanes + 8));
        const float *strip = W + (size_t)(n0 / 32) * panelStep + n0 % 32;
        for (int r0 = 0; r0 < M; r0 += MR2) {
            const int mr = M - r0 < MR2 ? M - r0 : MR2;
            row_tile_avx2(mr, K, A + (size_t)r0 * lda, lda, strip, ldw, m0, m1, masked, C + (size_t)r0 * ldc + n0, ldc,
                          accumulate);
        }
    }
}

__attribute__((target("avx512f")))
float drummer_fma_peak_loop_avx512(long iterations) {
    __m512 a0 = _mm512_set1_ps(0.0f), a1 = _mm512_set1_ps(1.0f), a2 = _mm512_set1_ps(2.0f), a3 = _mm512_set1_ps(3.0f);
    __m512 a4 = _mm512_set1_ps(4.0f), a5 = _mm512_set1_ps(5.0f), a6 = _mm512_set1_ps(6.0f), a7 = _mm512_set1_ps(7.0f);
    __m512 a8 = _mm512_set1_ps(8.0f), a9 = _mm512_set1_ps(9.0f), a10 = _mm512_set1_ps(10.0f), a11 = _mm512_set1_ps(11.0f);
    const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
    for (long n = 0; n < iterations; n++) {
        a0 = _mm512_fmadd_ps(a0, x, y); a1 = _mm512_fmadd_ps(a1, x, y); a2 = _mm512_fmadd_ps(a2, x, y);
        a3 = _mm512_fmadd_ps(a3, x, y); a4 = _mm512_fmadd_ps(a4, x, y); a5 = _mm512_fmadd_ps(a5, x, y);
        a6 = _mm512_fmadd_ps(a6, x, y); a7 = _mm512_fmadd_ps(a7, x, y); a8 = _mm512_fmadd_ps(a8, x, y);
        a9 = _mm512_fmadd_ps(a9, x, y); a10 = _mm512_fmadd_ps(a10, x, y); a11 = _mm512_fmadd_ps(a11, x, y);
        // Keep the twelve chains in registers and in the loop.
        __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5),
                              "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma")))
float drummer_fma_peak_loop_avx2(long iterations) {
    __m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(1.0f), a2 = _mm256_set1_ps(2.0f), a3 = _mm256_set1_ps(3.0f);
    __m256 a4 = _mm256_set1_ps(4.0f), a5 = _mm256_set1_ps(5.0f), a6 = _mm256_set1_ps(6.0f), a7 = _mm256_set1_ps(7.0f);
    __m256 a8 = _mm256_set1_ps(8.0f), a9 = _mm256_set1_ps(9.0f), a10 = _mm256_set1_ps(10.0f), a11 = _mm256_set1_ps(11.0f);
    const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
    for (long n = 0; n < iterations; n++) {
        a0 = _mm256_fmadd_ps(a0, x, y); a1 = _mm256_fmadd_ps(a1, x, y); a2 = _mm256_fmadd_ps(a2, x, y);
        a3 = _mm256_fmadd_ps(a3, x, y); a4 = _mm256_fmadd_ps(a4, x, y); a5 = _mm256_fmadd_ps(a5, x, y);
        a6 = _mm256_fmadd_ps(a6, x, y); a7 = _mm256_fmadd_ps(a7, x, y); a8 = _mm256_fmadd_ps(a8, x, y);
        a9 = _mm256_fmadd_ps(a9, x, y); a10 = _mm256_fmadd_ps(a10, x, y); a11 = _mm256_fmadd_ps(a11, x, y);
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                              "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

// The product as a plain loop over gemm_tiles' layout, so that drummer_gemm and
// drummer_gemm_panels stay correct at the baseline level, whose table has no product (the
// Swift side asks drummer_kernels_have_gemm and uses OpenBLAS there instead).
static void gemm_tiles_plain(int M, int N, int K, const float *A, int lda, const float *W, size_t panelStep, int ldw,
                             float *C, int ldc, int accumulate) {
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            const float *column = W + (size_t)(n / 32) * panelStep + n % 32;
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += A[(size_t)m * lda + k] * column[(size_t)k * ldw];
            C[(size_t)m * ldc + n] = accumulate ? s + C[(size_t)m * ldc + n] : s;
        }
}

// MARK: the variants and their tables

#define ELEMENTWISE_VARIANTS(ATTR, SUFFIX) \
    ATTR static void input_block_##SUFFIX(int n, const float *restrict w, const int32_t *restrict rows, int k, \
                                          const float *restrict bias, float *restrict out, float *next) { \
        input_block_body(n, w, rows, k, bias, out, next); } \
    ATTR static void scatter_rows_##SUFFIX(int n, const float *restrict x, int wrows, const int32_t *restrict start, \
                                           const int32_t *restrict order, float *restrict y, int overwrite) { \
        scatter_rows_body(n, x, wrows, start, order, y, overwrite); } \
    ATTR static void accumulate_##SUFFIX(int n, const float *restrict x, float *restrict y) { accumulate_body(n, x, y); } \
    ATTR static void difference_##SUFFIX(int n, const float *a, const float *restrict b, float *out) { \
        difference_body(n, a, b, out); } \
    ATTR static void dropout_row_##SUFFIX(int n, uint64_t key, uint32_t threshold, float keep, float *restrict out) { \
        dropout_row_body(n, key, threshold, keep, out); } \
    ATTR static void adam_##SUFFIX(long n, float *restrict p, const float *restrict grad, const float *restrict addend, \
                                   float *restrict m, float *restrict v, float lr, float lo, float hi, float b1, \
                                   float b2, float d1, float d2, float c1, float c2, float eps) { \
        adam_body(n, p, grad, addend, m, v, lr, lo, hi, b1, b2, d1, d2, c1, c2, eps); } \
    ATTR static void cell_forward_##SUFFIX(int H, float *restrict gates, const float *restrict cPrev, \
                                           float *restrict cNew, float *restrict tanhC, float *restrict hNew) { \
        cell_forward_body(H, gates, cPrev, cNew, tanhC, hNew); } \
    ATTR static void cell_backward_##SUFFIX(int H, const float *acts, const float *restrict cPrev, \
                                            const float *restrict tanhC, const float *restrict dhOut, \
                                            const float *restrict dhNext, float *restrict dc, float *dGates, \
                                            const float *next) { \
        cell_backward_body(H, acts, cPrev, tanhC, dhOut, dhNext, dc, dGates, next); } \
    ATTR static float negative_log_likelihood_##SUFFIX(float *y, int n, int target) { \
        return negative_log_likelihood_body(y, n, target); } \
    ATTR static float softmax_cross_entropy_##SUFFIX(float *y, int n, int target, float scale) { \
        return softmax_cross_entropy_body(y, n, target, scale); }

#define TABLE(ISA, SUFFIX, GEMM, GEMM_PANELS) { ISA, input_block_##SUFFIX, scatter_rows_##SUFFIX, accumulate_##SUFFIX, \
    difference_##SUFFIX, dropout_row_##SUFFIX, adam_##SUFFIX, cell_forward_##SUFFIX, cell_backward_##SUFFIX, negative_log_likelihood_##SUFFIX, \
    softmax_cross_entropy_##SUFFIX, GEMM, GEMM_PANELS }

ELEMENTWISE_VARIANTS(, baseline)
static const drummer_kernel_table baseline_table = TABLE(DRUMMER_ISA_BASELINE, baseline, NULL, NULL);

#ifdef DRUMMER_X86
ELEMENTWISE_VARIANTS(V3, avx2)
ELEMENTWISE_VARIANTS(V4, avx512)

// A level's two product entry points over its gemm_tiles_SUFFIX: W in place (panel step 32,
// W's own ldw) and W packed by drummer_pack_panels (panel step 32·K, rows 32 floats apart).
#define GEMM_VARIANTS(ATTR, SUFFIX) \
    ATTR static void gemm_##SUFFIX(int M, int N, int K, const float *A, int lda, const float *W, int ldw, float *C, \
                                   int ldc, int accumulate) { \
        gemm_tiles_##SUFFIX(M, N, K, A, lda, W, 32, ldw, C, ldc, accumulate); } \
    ATTR static void gemm_panels_##SUFFIX(int M, int N, int K, const float *A, int lda, const float *P, float *C, \
                                          int ldc, int accumulate) { \
        gemm_tiles_##SUFFIX(M, N, K, A, lda, P, (size_t)32 * K, 32, C, ldc, accumulate); }

GEMM_VARIANTS(V3, avx2)
GEMM_VARIANTS(V4, avx512)

static const drummer_kernel_table avx2_table = TABLE(DRUMMER_ISA_AVX2, avx2, gemm_avx2, gemm_panels_avx2);
static const drummer_kernel_table avx512_table = TABLE(DRUMMER_ISA_AVX512, avx512, gemm_avx512, gemm_panels_avx512);
#else
float drummer_fma_peak_loop_avx512(long iterations) { (void)iterations; return 0.0f; }
float drummer_fma_peak_loop_avx2(long iterations) { (void)iterations; return 0.0f; }
#endif

const drummer_kernel_table *drummer_kernels_table(int isa) {
    if (isa < 0 || isa > drummer_kernels_cpu_isa()) return NULL;
#ifdef DRUMMER_X86
    if (isa == DRUMMER_ISA_AVX512) return &avx512_table;
    if (isa == DRUMMER_ISA_AVX2) return &avx2_table;
#endif
    return &baseline_table;
}

static inline const drummer_kernel_table *active(void) {
    static const drummer_kernel_table *cached = NULL;
    const drummer_kernel_table *t = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (t == NULL) {
        t = drummer_kernels_table(drummer_kernels_isa());
        __atomic_store_n(&cached, t, __ATOMIC_RELEASE);
    }
    return t;
}

// MARK: entry points (the active table's)

void drummer_input_block(int n, const float *w, const int32_t *rows, int k, const float *bias, float *out,
                         float *next) {
    active()->input_block(n, w, rows, k, bias, out, next);
}
void drummer_scatter_rows(int n, const float *x, int wrows, const int32_t *start, const int32_t *order, float *y,
                          int overwrite) {
    active()->scatter_rows(n, x, wrows, start, order, y, overwrite);
}
void drummer_accumulate(int n, const float *x, float *y) { active()->accumulate(n, x, y); }
void drummer_difference(int n, const float *a, const float *b, float *out) { active()->difference(n, a, b, out); }
void drummer_dropout_row(int n, uint64_t key, uint32_t threshold, float keep, float *out) {
    active()->dropout_row(n, key, threshold, keep, out);
}
void drummer_adam(long n, float *p, const float *grad, const float *addend, float *m, float *v, float lr, float lo,
                  float hi, float b1, float b2, float d1, float d2, float c1, float c2, float eps) {
    active()->adam(n, p, grad, addend, m, v, lr, lo, hi, b1, b2, d1, d2, c1, c2, eps);
}
void drummer_cell_forward(int H, float *gates, const float *cPrev, float *cNew, float *tanhC, float *hNew) {
    active()->cell_forward(H, gates, cPrev, cNew, tanhC, hNew);
}
void drummer_cell_backward(int H, const float *acts, const float *cPrev, const float *tanhC, const float *dhOut,
                           const float *dhNext, float *dc, float *dGates, const float *next) {
    active()->cell_backward(H, acts, cPrev, tanhC, dhOut, dhNext, dc, dGates, next);
}
float drummer_negative_log_likelihood(float *y, int n, int target) {
    return active()->negative_log_likelihood(y, n, target);
}
float drummer_softmax_cross_entropy(float *y, int n, int target, float scale) {
    return active()->softmax_cross_entropy(y, n, target, scale);
}
int drummer_kernels_have_gemm(void) { return active()->gemm != NULL; }
void drummer_gemm(int M, int N, int K, const float *A, int lda, const float *W, int ldw, float *C, int ldc,
                  int accumulate) {
    const drummer_kernel_table *t = active();
    if (t->gemm != NULL) t->gemm(M, N, K, A, lda, W, ldw, C, ldc, accumulate);
    else gemm_tiles_plain(M, N, K, A, lda, W, 32, ldw, C, ldc, accumulate);
}
void drummer_gemm_panels(int M, int N, int K, const float *A, int lda, const float *P, float *C, int ldc,
                         int accumulate) {
    const drummer_kernel_table *t = active();
    if (t->gemm_panels != NULL) t->gemm_panels(M, N, K, A, lda, P, C, ldc, accumulate);
    else gemm_tiles_plain(M, N, K, A, lda, P, (size_t)32 * K, 32, C, ldc, accumulate);
}
