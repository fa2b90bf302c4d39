// SHA-256's compression function (FIPS 180-4) over whole 64-byte blocks, for DrummerCore's
// SHA256 (which pads and formats): with the x86 SHA extensions where the CPU has them (Intel
// from Ice Lake and Goldmont, AMD from Zen; 4 rounds per sha256rnds2 pair), else portable C.
// The model files are hashed on every load (model.json lists their digests), so this is part
// of how fast `drummer sample` starts.
#include "drummer_kernels.h"
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define DRUMMER_X86_SHA 1
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr32(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void drummer_sha256_blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks) {
    uint32_t w[64];
    for (; blocks > 0; blocks--, data += 64) {
        for (int t = 0; t < 16; t++) {
            const uint8_t *p = data + 4 * t;
            w[t] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
        }
        for (int t = 16; t < 64; t++) {
            uint32_t x = w[t - 15], y = w[t - 2];
            uint32_t s0 = rotr32(x, 7) ^ rotr32(x, 18) ^ (x >> 3);
            uint32_t s1 = rotr32(y, 17) ^ rotr32(y, 19) ^ (y >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t s1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25);
            uint32_t ch = (e & f) ^ (~e & g);
            uint32_t t1 = h + s1 + ch + K256[t] + w[t];
            uint32_t s0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22);
            uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
            uint32_t t2 = s0 + maj;
            h = g; g = f; f = e; e = d + t1;
            d = c; c = b; b = a; a = t1 + t2;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d;
        state[4] += e; state[5] += f; state[6] += g; state[7] += h;
    }
}

#ifdef DRUMMER_X86_SHA
// The SHA extensions keep the state as two vectors, ABEF and CDGH (the words of each in
// reverse lane order), and run two rounds per sha256rnds2 on W[t] + K[t] of two lanes.
// The message schedule, 4 words at a time: M_g = msg2(msg1(M_{g−4}, M_{g−3}) +
// (W[4g−7..4g−4] = alignr(M_{g−1}, M_{g−2}, 4)), M_{g−1}).
__attribute__((target("sha,sse4.1,ssse3")))
static void sha256_blocks_shani(uint32_t state[8], const uint8_t *data, size_t blocks) {
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&state[0]);    // words A B C D in lanes 0..3
    __m128i state1 = _mm_loadu_si128((const __m128i *)&state[4]); // E F G H
    tmp = _mm_shuffle_epi32(tmp, 0xB1);                            // B A D C
    state1 = _mm_shuffle_epi32(state1, 0x1B);                      // H G F E
    __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);              // F E B A: "ABEF"
    state1 = _mm_blend_epi16(state1, tmp, 0xF0);                   // H G D C: "CDGH"
    for (; blocks > 0; blocks--, data += 64) {
        const __m128i abef = state0, cdgh = state1;
        __m128i m[4];
        for (int g = 0; g < 16; g++) {
            __m128i w;
            if (g < 4) {
                w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * g)), byteswap);
            } else {
                w = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);
                w = _mm_add_epi32(w, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
                w = _mm_sha256msg2_epu32(w, m[(g + 3) & 3]);
            }
            m[g & 3] = w;
            __m128i msg = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&K256[4 * g]));
            state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
            msg = _mm_shuffle_epi32(msg, 0x0E);
            state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
        }
        state0 = _mm_add_epi32(state0, abef);
        state1 = _mm_add_epi32(state1, cdgh);
    }
    tmp = _mm_shuffle_epi32(state0, 0x1B);          // A B E F
    state1 = _mm_shuffle_epi32(state1, 0xB1);       // G H C D
    state0 = _mm_blend_epi16(tmp, state1, 0xF0);    // A B C D
    state1 = _mm_alignr_epi8(state1, tmp, 8);       // E F G H
    _mm_storeu_si128((__m128i *)&state[0], state0);
    _mm_storeu_si128((__m128i *)&state[4], state1);
}

static int have_sha_extensions(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    int sha = (b >> 29) & 1;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int sse41 = (c >> 19) & 1, ssse3 = (c >> 9) & 1;
    return sha && sse41 && ssse3;
}
#endif

int drummer_sha256_have_extensions(void) {
#ifdef DRUMMER_X86_SHA
    static int cached = -1;
    if (cached < 0) cached = have_sha_extensions();
    return cached;
#else
    return 0;
#endif
}

void drummer_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) {
#ifdef DRUMMER_X86_SHA
    if (drummer_sha256_have_extensions()) {
        sha256_blocks_shani(state, data, blocks);
        return;
    }
#endif
    drummer_sha256_blocks_portable(state, data, blocks);
}
