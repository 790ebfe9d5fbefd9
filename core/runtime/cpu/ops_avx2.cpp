// ops.h's operations with AVX2 + FMA + F16C, 8 floats a register (ops_simd_x86.inc). Compiled for
// baseline x86-64: only these functions use the wider instructions, and a backend runs them only
// where cpu_has_avx2_kernels() (through avx2_matmul_kernels().ops).
#include "runtime/cpu/op_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "runtime/cpu/ops.h"

#define KILN_OPS_TARGET __attribute__((target("avx2,fma,f16c")))

namespace kiln {
namespace {

struct Avx2 {
  using F = __m256;
  using D = __m256d;
  static constexpr int kWidth = 8;
  KILN_OPS_TARGET static F load(const float* p) { return _mm256_loadu_ps(p); }
  KILN_OPS_TARGET static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  KILN_OPS_TARGET static F set1(float v) { return _mm256_set1_ps(v); }
  KILN_OPS_TARGET static F load_f16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  KILN_OPS_TARGET static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  KILN_OPS_TARGET static F max(F a, F b) { return _mm256_max_ps(a, b); }
  KILN_OPS_TARGET static F min(F a, F b) { return _mm256_min_ps(a, b); }
  KILN_OPS_TARGET static F round(F v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  KILN_OPS_TARGET static F pow2(F n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  KILN_OPS_TARGET static F keep_not_below(F v, F x, F bound) {
    return _mm256_and_ps(v, _mm256_cmp_ps(x, bound, _CMP_NLT_UQ));
  }
  KILN_OPS_TARGET static F abs(F x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
  KILN_OPS_TARGET static F with_sign_of(F v, F x) { return _mm256_or_ps(v, _mm256_and_ps(x, _mm256_set1_ps(-0.0f))); }
  KILN_OPS_TARGET static D dzero() { return _mm256_setzero_pd(); }
  KILN_OPS_TARGET static void add_squares(F v, D acc[2]) {
    const D lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    acc[0] = _mm256_fmadd_pd(lo, lo, acc[0]);
    acc[1] = _mm256_fmadd_pd(hi, hi, acc[1]);
  }
  KILN_OPS_TARGET static void add_widened(F v, D acc[2]) {
    acc[0] = _mm256_add_pd(acc[0], _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    acc[1] = _mm256_add_pd(acc[1], _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  KILN_OPS_TARGET static double dsum(D v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  KILN_OPS_TARGET static float hmax(F v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
  }
};

#include "runtime/cpu/ops_simd_x86.inc"

}  // namespace

OpKernels avx2_op_kernels() { return simd_op_kernels<Avx2>(); }

}  // namespace kiln

#else  // not x86-64: only the reference exists

namespace kiln {
OpKernels avx2_op_kernels() { return portable_op_kernels(); }
}  // namespace kiln

#endif
