// ops.h's operations with AVX-512 F/BW/VL, 16 floats a register (ops_simd_x86.inc). Compiled for
// baseline x86-64: only these functions use the wider instructions, and a backend runs them only
// where cpu_has_avx512_kernels() (through avx512_matmul_kernels().ops).
#include "runtime/cpu/op_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "runtime/cpu/ops.h"

#define KILN_OPS_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))

namespace kiln {
namespace {

// GCC 12 reports the "undefined" start register of several unmasked AVX-512 intrinsics
// (-Wmaybe-uninitialized): their masked forms, all lanes on, avoid it (as matmul_float_avx512.cpp).
constexpr __mmask16 kAll16 = 0xffff;
constexpr __mmask8 kAll8 = 0xff;

struct Avx512 {
  using F = __m512;
  using D = __m512d;
  static constexpr int kWidth = 16;
  KILN_OPS_TARGET static F load(const float* p) { return _mm512_loadu_ps(p); }
  KILN_OPS_TARGET static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  KILN_OPS_TARGET static F set1(float v) { return _mm512_set1_ps(v); }
  KILN_OPS_TARGET static F load_f16(const uint16_t* p) {
    return _mm512_maskz_cvtph_ps(kAll16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  KILN_OPS_TARGET static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  KILN_OPS_TARGET static F max(F a, F b) { return _mm512_maskz_max_ps(kAll16, a, b); }
  KILN_OPS_TARGET static F min(F a, F b) { return _mm512_maskz_min_ps(kAll16, a, b); }
  KILN_OPS_TARGET static F round(F v) {
    return _mm512_maskz_roundscale_ps(kAll16, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  KILN_OPS_TARGET static F pow2(F n) {
    const __m512i e = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAll16, n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll16, e, 23));
  }
  KILN_OPS_TARGET static F keep_not_below(F v, F x, F bound) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, bound, _CMP_NLT_UQ), v);
  }
  // Sign-bit operations in integer registers (the float forms are AVX512DQ).
  KILN_OPS_TARGET static F abs(F x) {
    return _mm512_castsi512_ps(_mm512_and_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
  }
  KILN_OPS_TARGET static F with_sign_of(F v, F x) {
    const __m512i sign = _mm512_and_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(int32_t(0x80000000u)));
    return _mm512_castsi512_ps(_mm512_or_epi32(_mm512_castps_si512(v), sign));
  }
  KILN_OPS_TARGET static D dzero() { return _mm512_setzero_pd(); }
  // Half 0 or 1 of v: 8 floats.
  KILN_OPS_TARGET static __m256 half(F v, int which) {
    const __m512d d = _mm512_castps_pd(v);
    return _mm256_castpd_ps(which ? _mm512_maskz_extractf64x4_pd(kAll8, d, 1)
                                  : _mm512_maskz_extractf64x4_pd(kAll8, d, 0));
  }
  KILN_OPS_TARGET static void add_squares(F v, D acc[2]) {
    const D lo = _mm512_maskz_cvtps_pd(kAll8, half(v, 0)), hi = _mm512_maskz_cvtps_pd(kAll8, half(v, 1));
    acc[0] = _mm512_fmadd_pd(lo, lo, acc[0]);
    acc[1] = _mm512_fmadd_pd(hi, hi, acc[1]);
  }
  KILN_OPS_TARGET static void add_widened(F v, D acc[2]) {
    acc[0] = _mm512_add_pd(acc[0], _mm512_maskz_cvtps_pd(kAll8, half(v, 0)));
    acc[1] = _mm512_add_pd(acc[1], _mm512_maskz_cvtps_pd(kAll8, half(v, 1)));
  }
  KILN_OPS_TARGET static double dsum(D v) {
    const __m256d h =
        _mm256_add_pd(_mm512_maskz_extractf64x4_pd(kAll8, v, 0), _mm512_maskz_extractf64x4_pd(kAll8, v, 1));
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  KILN_OPS_TARGET static float hmax(F v) {
    const __m256 h = _mm256_max_ps(half(v, 0), half(v, 1));
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
  }
};

#include "runtime/cpu/ops_simd_x86.inc"

}  // namespace

OpKernels avx512_op_kernels() { return simd_op_kernels<Avx512>(); }

}  // namespace kiln

#else  // not x86-64: only the reference exists

namespace kiln {
OpKernels avx512_op_kernels() { return portable_op_kernels(); }
}  // namespace kiln

#endif
