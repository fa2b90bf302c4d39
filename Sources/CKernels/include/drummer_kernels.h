#ifndef DRUMMER_KERNELS_H
#define DRUMMER_KERNELS_H
// Hot loops of the LSTM trainer in C, where the compiler can be told which
// instruction set to use per function: the elementwise cell, softmax, gather and
// update kernels are compiled for x86-64-v4 (AVX-512), x86-64-v3 (AVX2 + FMA) and the
// baseline, the recurrent product for AVX-512 and for AVX2 + FMA; one level's table is
// picked at the first call: the CPU's best, or a lower one named by the environment
// variable DRUMMER_MAX_ISA (avx512, avx2 or baseline), so that one machine can run and
// test what another runs. H = hidden size, G = 4H (gate blocks f, i, o, g), all buffers
// row-major float32.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    DRUMMER_ISA_BASELINE = 0,
    DRUMMER_ISA_AVX2 = 1,    /* x86-64-v3: AVX2, FMA */
    DRUMMER_ISA_AVX512 = 2,  /* x86-64-v4: AVX-512 F, BW, CD, DQ, VL */
};

/// The best level this CPU runs.
int drummer_kernels_cpu_isa(void);

// CPUs in this process's affinity mask (taskset, a cpuset); 0 where it cannot be read.
int drummer_affinity_cpu_count(void);
// Names the calling thread (as top -H and /proc/PID/task/TID/comm show it; 15 bytes at most).
void drummer_name_this_thread(const char *name);

/// The level DRUMMER_MAX_ISA names (DRUMMER_ISA_AVX512 when unset or empty), or −1 when it
/// holds anything but avx512, avx2 or baseline.
int drummer_kernels_isa_setting(void);

/// The level the entry points below run: the CPU's, capped by DRUMMER_MAX_ISA (read once).
int drummer_kernels_isa(void);

/// 1 when the level in use has its own recurrent product (AVX2 and above), else 0:
/// drummer_gemm then runs a plain loop, and callers use OpenBLAS instead.
int drummer_kernels_have_gemm(void);

/// C[M×N] = A[M×K]·W[K×N] (accumulate = 0) or C += A·W (accumulate = 1), row-major with
/// leading dimensions lda, ldw, ldc. For the small-M products of the recurrence, where
/// W stays in cache across calls and needs no packing. Every element is Σ_k A[m, k]·W[k, n]
/// by FMA in k order from zero (then + C): the AVX-512 and AVX2 levels give the same bits.
void drummer_gemm(int M, int N, int K, const float *A, int lda, const float *W, int ldw,
                         float *C, int ldc, int accumulate);

/// The operand W (K×N) of drummer_gemm_panels in its layout: panels of 32 columns,
/// ceil(N/32) of them, each K rows of 32 floats (zero past N); out holds ceil(N/32)·32·K floats.
/// transposed = 0: W is read row-major with leading dimension ldw; transposed = 1: the
/// operand is Sᵀ for S (N×K, leading dimension ldw) read from `W` (a transpose and a pack in one).
void drummer_pack_panels(int K, int N, const float *W, int ldw, int transposed, float *out);

/// drummer_gemm with W packed by drummer_pack_panels: the same sums and bits, with W read as
/// one sequential stream per panel.
void drummer_gemm_panels(int M, int N, int K, const float *A, int lda, const float *P,
                                float *C, int ldc, int accumulate);

/// A benchmark probe: `iterations` rounds of 12 independent AVX-512 FMA chains (384 FLOP per
/// round) on registers, no memory traffic: the core's float32 FMA throughput ceiling. Returns
/// a value derived from the results (so the loop is not optimised away). Requires AVX-512F.
float drummer_fma_peak_loop_avx512(long iterations);

/// The same probe on 256-bit registers: 12 AVX2 FMA chains, 192 FLOP per round. Requires AVX2 + FMA.
float drummer_fma_peak_loop_avx2(long iterations);

/// σ and tanh inside the cell kernels are Cephes-style single-precision polynomials (≈2 ulp).
/// Cell forward of one stream at one step. gates (G): pre-activations in, σ(f), σ(i), σ(o),
/// tanh(g) out; cNew = σ(f)·cPrev + σ(i)·tanh(g); tanhC = tanh(cNew); hNew = σ(o)·tanhC.
void drummer_cell_forward(int H, float *gates, const float *cPrev, float *cNew, float *tanhC, float *hNew);

/// Cell backward of one stream at one step. dh = dhOut + dhNext reaches h_t; dc holds the
/// gradient reaching c_t from step t+1 on entry and the one reaching c_{t−1} on return;
/// dGates (G) receives the pre-activation gradients: it may be acts (in place), and overlaps
/// nothing else. next (NULL or another row's G activations, which the caller reads soon) is
/// prefetched into L2 line by line as acts is read: a hint, no effect on any value.
void drummer_cell_backward(int H, const float *acts, const float *cPrev, const float *tanhC,
                           const float *dhOut, const float *dhNext, float *dc, float *dGates, const float *next);

/// The input block of the gates for one step: out[j] = (w[rows[0]·n + j] + … + w[rows[k−1]·n + j]) + bias[j]
/// for j < n, summed in that order: the one-hot input x·Wx is the sum of one row of w per input group.
/// next (NULL or n floats the caller writes soon) is prefetched for writing into L2 as out is
/// written: a hint, no effect on any value.
void drummer_input_block(int n, const float *w, const int32_t *rows, int k, const float *bias, float *out,
                         float *next);

/// The order in which drummer_scatter_rows adds: the count·k entries of rows (each < wrows; a
/// negative entry is skipped) sorted by value, stably; order receives their source rows
/// (entry i / k), start (wrows + 1 entries) where each w row's run begins.
void drummer_scatter_rows_order(int count, const int32_t *rows, int k, int wrows, int32_t *start,
                                int32_t *order);

/// y[w] += x[order[i]] (rows of n floats) for each w < wrows and start[w] ≤ i < start[w + 1], in
/// that order: the scatter-add y[rows[r·k + g]] += x[r] of every (r, g) in the order r, g would
/// add them (the same bits), each y row read and written once per column slice. overwrite = 1:
/// y's old values are not read, as if y had been zeroed first (the same bits), rows with no
/// pair included.
void drummer_scatter_rows(int n, const float *x, int wrows, const int32_t *start, const int32_t *order,
                          float *y, int overwrite);

/// y[j] += x[j] for j < n.
void drummer_accumulate(int n, const float *x, float *y);

/// out[j] = a[j] − b[j] for j < n; out may be a (in place), not b.
void drummer_difference(int n, const float *a, const float *b, float *out);

/// One row of a dropout mask: out[j] = 0 when the top 24 bits of SplitMix64's finaliser of
/// key ^ j are below threshold, else keep, for j < n.
void drummer_dropout_row(int n, uint64_t key, uint32_t threshold, float keep, float *out);

/// One Adam step of n parameters, each as the scalar form computes it, every operation rounded
/// on its own (no fused multiply-add): g = min(max(grad, lo), hi), m = b1·m + d1·g,
/// v = b2·v + d2·(g·g), p −= lr·(m / c1) / (√(v / c2) + eps). addend (NULL or n floats): the
/// gradient is grad + addend, the bits of adding addend into grad first; grad is not written.
void drummer_adam(long n, float *p, const float *grad, const float *addend, float *m, float *v, float lr, float lo,
                  float hi, float b1, float b2, float d1, float d2, float c1, float c2, float eps);

/// −log softmax(y)[target] over n logits; overwrites y with e^(y − max y).
float drummer_negative_log_likelihood(float *y, int n, int target);

/// Cross-entropy of softmax(y) against target; replaces y by scale·(softmax − onehot).
float drummer_softmax_cross_entropy(float *y, int n, int target, float scale);

/// SHA-256's compression of `blocks` whole 64-byte blocks of `data` into `state` (the eight
/// words, A first): with the x86 SHA extensions where the CPU has them, else portable C.
void drummer_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

/// The portable path alone (tests compare the two).
void drummer_sha256_blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks);

/// 1 when this CPU has the SHA extensions drummer_sha256_blocks uses, else 0.
int drummer_sha256_have_extensions(void);

/// One level's kernels (the entry points above call the active level's), for tests that
/// compare the levels on one machine.
typedef struct drummer_kernel_table {
    int isa;
    void (*input_block)(int n, const float *w, const int32_t *rows, int k, const float *bias, float *out,
                        float *next);
    void (*scatter_rows)(int n, const float *x, int wrows, const int32_t *start, const int32_t *order, float *y,
                         int overwrite);
    void (*accumulate)(int n, const float *x, float *y);
    void (*difference)(int n, const float *a, const float *b, float *out);
    void (*dropout_row)(int n, uint64_t key, uint32_t threshold, float keep, float *out);
    void (*adam)(long n, float *p, const float *grad, const float *addend, float *m, float *v, float lr, float lo,
                 float hi, float b1, float b2, float d1, float d2, float c1, float c2, float eps);
    void (*cell_forward)(int H, float *gates, const float *cPrev, float *cNew, float *tanhC, float *hNew);
    void (*cell_backward)(int H, const float *acts, const float *cPrev, const float *tanhC, const float *dhOut,
                          const float *dhNext, float *dc, float *dGates, const float *next);
    float (*negative_log_likelihood)(float *y, int n, int target);
    float (*softmax_cross_entropy)(float *y, int n, int target, float scale);
    /// NULL at the baseline level.
    void (*gemm)(int M, int N, int K, const float *A, int lda, const float *W, int ldw, float *C, int ldc,
                 int accumulate);
    void (*gemm_panels)(int M, int N, int K, const float *A, int lda, const float *P, float *C, int ldc,
                        int accumulate);
} drummer_kernel_table;

/// The table of level `isa`, or NULL when this CPU cannot run it.
const drummer_kernel_table *drummer_kernels_table(int isa);

#ifdef __cplusplus
}
#endif
#endif
