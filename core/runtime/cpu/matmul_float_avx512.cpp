// BF16 and F16 weights with AVX-512, decode and prefill alike.
// - BF16: vdpbf16ps (AVX512_BF16) multiplies pairs of bf16 weights by pairs of bf16 activations and
//   adds both products to an fp32 lane. Each token's activations are rounded to bf16 once per
//   product (round_activations_bf16); the products of two bf16 are exact in fp32 and the sums are
//   fp32, so the only error beyond fp32 accumulation is that rounding: at most 2^-8 of sum |w x|.
// - F16: 16 weights at a time widened by vcvtph2ps, fp32 FMAs against float activations (no
//   rounding beyond fp32 accumulation).
// Both walk a tile of kRows weight rows against kTokens tokens at once, so that each weight vector
// loaded (and converted) serves kTokens tokens and each activation vector kRows rows: 24 of the 32
// vector registers hold sums. The sums run along a row, so they end in horizontal adds, once per
// tile and row length. Compiled for baseline x86-64; the kernels run only where the CPU has the
// instructions (cpu_has_avx512_kernels, cpu_has_avx512_bf16_kernels).
#include "runtime/cpu/matmul_kernels.h"

#include <bit>
#include <cstring>

namespace kiln {

uint16_t round_to_bf16(float f) {
  const uint32_t b = std::bit_cast<uint32_t>(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((b >> 16) | 0x40u);  // nan, quieted
  if ((b & 0x7f800000u) == 0) return static_cast<uint16_t>((b >> 16) & 0x8000u);          // zero, subnormal
  return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);                   // nearest, ties even
}

void round_activations_bf16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = round_to_bf16(x[i]);
}

}  // namespace kiln

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define KILN_AVX512_F16 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))
#define KILN_AVX512_BF16 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512bf16")))

namespace kiln {

namespace {

constexpr int kTileRows = 4;    // weight rows a tile
constexpr int kTileTokens = 6;  // tokens a tile

// GCC 12's _mm512_cvtph_ps, _mm512_unpack*_ps, _mm512_castps512_ps256 and _mm512_reduce_add_ps
// start from an "undefined" register that -Wuninitialized reports: the masked forms (all lanes)
// and this sum avoid them.
KILN_AVX512_F16 inline float sum_lanes(__m512 v) {
  const __m512d d = _mm512_castps_pd(v);
  const __m256 half = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 0)),
                                    _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 1)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// The formats' inner steps. Each has: kStep weights a step; load_w (a row's next kStep weights,
// converted where needed) and load_x (a token's); madd (sum += w * x); and masked versions of both
// loads that read only `left` < kStep elements and zero the rest.
struct Bf16Format {
  using Weight = __m512bh;
  using Activation = uint16_t;
  static constexpr int kStep = 32;
  KILN_AVX512_BF16 static Weight load_w(const uint16_t* p) { return (__m512bh)_mm512_loadu_si512(p); }
  KILN_AVX512_BF16 static Weight load_x(const uint16_t* p) { return (__m512bh)_mm512_loadu_si512(p); }
  KILN_AVX512_BF16 static Weight load_w_part(const uint16_t* p, int64_t left) {
    return (__m512bh)_mm512_maskz_loadu_epi16(_cvtu32_mask32((1u << left) - 1u), p);
  }
  KILN_AVX512_BF16 static Weight load_x_part(const uint16_t* p, int64_t left) { return load_w_part(p, left); }
  KILN_AVX512_BF16 static __m512 madd(__m512 sum, Weight w, Weight x) { return _mm512_dpbf16_ps(sum, w, x); }
};

struct F16Format {
  using Weight = __m512;
  using Activation = float;
  static constexpr int kStep = 16;
  KILN_AVX512_F16 static __m512 load_w(const uint16_t* p) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  KILN_AVX512_F16 static __m512 load_x(const float* p) { return _mm512_loadu_ps(p); }
  KILN_AVX512_F16 static __m512 load_w_part(const uint16_t* p, int64_t left) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << left) - 1u), p));
  }
  KILN_AVX512_F16 static __m512 load_x_part(const float* p, int64_t left) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << left) - 1u), p);
  }
  KILN_AVX512_F16 static __m512 madd(__m512 sum, __m512 w, __m512 x) { return _mm512_fmadd_ps(w, x, sum); }
};

namespace f16 {
#define KILN_FLOAT_TARGET KILN_AVX512_F16
#include "runtime/cpu/matmul_float_tile_x86.inc"
#undef KILN_FLOAT_TARGET
}  // namespace f16

namespace bf16 {
#define KILN_FLOAT_TARGET KILN_AVX512_BF16
#include "runtime/cpu/matmul_float_tile_x86.inc"
#undef KILN_FLOAT_TARGET
}  // namespace bf16

KILN_AVX512_BF16 void dot_rows_bf16(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const uint16_t* x,
                                    int64_t tokens, float* y, int64_t ld_y) {
  bf16::dot_rows_tokens<Bf16Format>(w, stride, rows, cols, x, tokens, y, ld_y);
}

KILN_AVX512_F16 void dot_rows_f16_tokens(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x,
                                         int64_t tokens, float* y, int64_t ld_y) {
  f16::dot_rows_tokens<F16Format>(w, stride, rows, cols, x, tokens, y, ld_y);
}

// Decode's MatmulKernels::DotRows for F16: one token.
KILN_AVX512_F16 void dot_rows_f16(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x,
                                  float* y) {
  f16::dot_rows_tokens<F16Format>(w, stride, rows, cols, x, 1, y, 1);
}

// round_activations_bf16 with vcvtne2ps2bf16, which rounds the same way (nearest even, subnormals
// to zero, nan quieted), 32 at a time.
KILN_AVX512_BF16 void round_bf16(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512bh both = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_storeu_si512(out + i, (__m512i)both);
  }
  for (; i < n; ++i) out[i] = round_to_bf16(x[i]);
}

}  // namespace

bool cpu_has_avx512_bf16_kernels() {
  __builtin_cpu_init();
  return cpu_has_avx512_kernels() && __builtin_cpu_supports("avx512bf16");
}

void add_avx512_float_kernels(MatmulKernels& k) {
  k.dot_rows[static_cast<int>(DType::F16)] = dot_rows_f16;
  k.dot_rows_f16 = dot_rows_f16_tokens;
  if (cpu_has_avx512_bf16_kernels()) {
    k.dot_rows_bf16 = dot_rows_bf16;
    k.round_bf16 = round_bf16;
  }
}

}  // namespace kiln

#else  // not x86-64

namespace kiln {
bool cpu_has_avx512_bf16_kernels() { return false; }
void add_avx512_float_kernels(MatmulKernels&) {}
}  // namespace kiln

#endif
