// AVX2 + FMA + F16C matmul kernels. The file is compiled for baseline x86-64: only functions marked
// KILN_AVX2 use the wider instructions, and matmul.cpp calls them only after checking the CPU, so
// the same binary still runs on older processors. Elsewhere only the portable set exists.
#include "runtime/cpu/matmul_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <cstdint>

#include "quant/convert.h"

#define KILN_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace kiln {

namespace {

// Measured: the hardware prefetcher alone leaves the compute-heavy decode loops waiting on memory;
// asking for the data ~512 bytes ahead gave up to 20% more bytes/s. Integer arithmetic, because
// the address may lie past the end of the weights (a prefetch there is harmless, a pointer is not).
constexpr uintptr_t kPrefetchBytes = 512;
KILN_AVX2 inline void prefetch_ahead(const void* p) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + kPrefetchBytes), _MM_HINT_T0);
}

KILN_AVX2 inline float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Eight consecutive weights of a float format, starting at element i, as floats.
template <DType T>
KILN_AVX2 inline __m256 load8(const void* row, int64_t i) {
  if constexpr (T == DType::F32) {
    return _mm256_loadu_ps(static_cast<const float*>(row) + i);
  } else if constexpr (T == DType::F16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
  } else {  // BF16: the top half of a float
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

template <DType T>
inline float load1(const void* row, int64_t i) {
  if constexpr (T == DType::F32) return static_cast<const float*>(row)[i];
  else if constexpr (T == DType::F16) return fp16_to_float(static_cast<const uint16_t*>(row)[i]);
  else return bf16_to_float(static_cast<const uint16_t*>(row)[i]);
}

// Eight int8 values as floats.
KILN_AVX2 inline __m256 int8x8_to_float(__m128i bytes) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
}

KILN_AVX2 inline float scale_of(uint16_t d) { return _cvtsh_ss(d); }

// The 32 weights of a Q4_0 block minus 8, as int8, in element order: low nibbles are elements
// 0..15, high nibbles 16..31.
KILN_AVX2 inline void unpack_q4_0(const BlockQ4_0& b, __m128i& first16, __m128i& last16) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m128i low_mask = _mm_set1_epi8(0x0f);
  const __m128i eight = _mm_set1_epi8(8);
  first16 = _mm_sub_epi8(_mm_and_si128(packed, low_mask), eight);
  last16 = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(packed, 4), low_mask), eight);
}

template <DType T>
KILN_AVX2 void dot_rows_float(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x,
                              float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const void* row = w + r * stride;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
           a3 = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 32 <= cols; c += 32) {  // four chains hide the FMA latency
      if constexpr (T != DType::F32) prefetch_ahead(static_cast<const uint16_t*>(row) + c);  // a line per step
      a0 = _mm256_fmadd_ps(load8<T>(row, c), _mm256_loadu_ps(x + c), a0);
      a1 = _mm256_fmadd_ps(load8<T>(row, c + 8), _mm256_loadu_ps(x + c + 8), a1);
      a2 = _mm256_fmadd_ps(load8<T>(row, c + 16), _mm256_loadu_ps(x + c + 16), a2);
      a3 = _mm256_fmadd_ps(load8<T>(row, c + 24), _mm256_loadu_ps(x + c + 24), a3);
    }
    for (; c + 8 <= cols; c += 8) a0 = _mm256_fmadd_ps(load8<T>(row, c), _mm256_loadu_ps(x + c), a0);
    float s = horizontal_sum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; c < cols; ++c) s += load1<T>(row, c) * x[c];
    y[r] = s;
  }
}

// Sum over one block of q[j] * x[j] (without the scale), two chains.
KILN_AVX2 inline __m256 block_q8_0_dot(const BlockQ8_0& b, const float* x) {
  const auto* q = reinterpret_cast<const __m128i*>(b.qs);
  const __m128i q01 = _mm_loadu_si128(q);
  const __m128i q23 = _mm_loadu_si128(q + 1);
  __m256 p0 = _mm256_mul_ps(int8x8_to_float(q01), _mm256_loadu_ps(x));
  __m256 p1 = _mm256_mul_ps(int8x8_to_float(_mm_unpackhi_epi64(q01, q01)), _mm256_loadu_ps(x + 8));
  p0 = _mm256_fmadd_ps(int8x8_to_float(q23), _mm256_loadu_ps(x + 16), p0);
  p1 = _mm256_fmadd_ps(int8x8_to_float(_mm_unpackhi_epi64(q23, q23)), _mm256_loadu_ps(x + 24), p1);
  return _mm256_add_ps(p0, p1);
}

KILN_AVX2 inline __m256 block_q4_0_dot(const BlockQ4_0& b, const float* x) {
  __m128i first16, last16;
  unpack_q4_0(b, first16, last16);
  __m256 p0 = _mm256_mul_ps(int8x8_to_float(first16), _mm256_loadu_ps(x));
  __m256 p1 = _mm256_mul_ps(int8x8_to_float(_mm_unpackhi_epi64(first16, first16)), _mm256_loadu_ps(x + 8));
  p0 = _mm256_fmadd_ps(int8x8_to_float(last16), _mm256_loadu_ps(x + 16), p0);
  p1 = _mm256_fmadd_ps(int8x8_to_float(_mm_unpackhi_epi64(last16, last16)), _mm256_loadu_ps(x + 24), p1);
  return _mm256_add_ps(p0, p1);
}

template <class Block, __m256 (*BlockDot)(const Block&, const float*)>
KILN_AVX2 void dot_rows_blocks(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x,
                               float* y) {
  const int64_t blocks = cols / kBlockSize;
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = reinterpret_cast<const Block*>(w + r * stride);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= blocks; b += 2) {
      prefetch_ahead(row + b);
      a0 = _mm256_fmadd_ps(_mm256_set1_ps(scale_of(row[b].d)), BlockDot(row[b], x + b * kBlockSize), a0);
      a1 = _mm256_fmadd_ps(_mm256_set1_ps(scale_of(row[b + 1].d)),
                           BlockDot(row[b + 1], x + (b + 1) * kBlockSize), a1);
    }
    if (b < blocks) {
      a0 = _mm256_fmadd_ps(_mm256_set1_ps(scale_of(row[b].d)), BlockDot(row[b], x + b * kBlockSize), a0);
    }
    y[r] = horizontal_sum(_mm256_add_ps(a0, a1));
  }
}

template <DType T>
KILN_AVX2 void to_float_float(const uint8_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8<T>(src, i));
  for (; i < n; ++i) dst[i] = load1<T>(src, i);
}

KILN_AVX2 void to_float_q8_0(const uint8_t* src, int64_t n, float* dst) {
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < n / kBlockSize; ++b, dst += kBlockSize) {
    const __m256 d = _mm256_set1_ps(scale_of(blocks[b].d));
    const auto* q = reinterpret_cast<const __m128i*>(blocks[b].qs);
    const __m128i q01 = _mm_loadu_si128(q);
    const __m128i q23 = _mm_loadu_si128(q + 1);
    _mm256_storeu_ps(dst, _mm256_mul_ps(d, int8x8_to_float(q01)));
    _mm256_storeu_ps(dst + 8, _mm256_mul_ps(d, int8x8_to_float(_mm_unpackhi_epi64(q01, q01))));
    _mm256_storeu_ps(dst + 16, _mm256_mul_ps(d, int8x8_to_float(q23)));
    _mm256_storeu_ps(dst + 24, _mm256_mul_ps(d, int8x8_to_float(_mm_unpackhi_epi64(q23, q23))));
  }
}

KILN_AVX2 void to_float_q4_0(const uint8_t* src, int64_t n, float* dst) {
  const auto* blocks = reinterpret_cast<const BlockQ4_0*>(src);
  for (int64_t b = 0; b < n / kBlockSize; ++b, dst += kBlockSize) {
    const __m256 d = _mm256_set1_ps(scale_of(blocks[b].d));
    __m128i first16, last16;
    unpack_q4_0(blocks[b], first16, last16);
    _mm256_storeu_ps(dst, _mm256_mul_ps(d, int8x8_to_float(first16)));
    _mm256_storeu_ps(dst + 8, _mm256_mul_ps(d, int8x8_to_float(_mm_unpackhi_epi64(first16, first16))));
    _mm256_storeu_ps(dst + 16, _mm256_mul_ps(d, int8x8_to_float(last16)));
    _mm256_storeu_ps(dst + 24, _mm256_mul_ps(d, int8x8_to_float(_mm_unpackhi_epi64(last16, last16))));
  }
}

// acc[0..8) += sum, for one row and 8 tokens.
KILN_AVX2 inline void add_to(float* acc, __m256 sum) { _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_loadu_ps(acc), sum)); }

// 6 rows x 16 tokens of sums in 12 registers: each step broadcasts one weight per row and loads two
// vectors of 8 tokens, 12 FMAs for 8 loads. Written out by hand: with arrays of __m256 GCC 12
// stored every accumulator to the stack on every step.
KILN_AVX2 void tile_6x16(const float* w, int64_t ld_w, const float* xt, int64_t ld_xt, int64_t k, float* acc,
                         int64_t ld_acc) {
  static_assert(MatmulKernels::kTileRows == 6);
  __m256 s00 = _mm256_setzero_ps(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00;
  __m256 s30 = s00, s31 = s00, s40 = s00, s41 = s00, s50 = s00, s51 = s00;
  const float *w0 = w, *w1 = w + ld_w, *w2 = w + 2 * ld_w, *w3 = w + 3 * ld_w, *w4 = w + 4 * ld_w,
              *w5 = w + 5 * ld_w;
  for (int64_t c = 0; c < k; ++c, xt += ld_xt) {
    const __m256 x0 = _mm256_loadu_ps(xt), x1 = _mm256_loadu_ps(xt + 8);
    __m256 b = _mm256_broadcast_ss(w0 + c);
    s00 = _mm256_fmadd_ps(b, x0, s00);
    s01 = _mm256_fmadd_ps(b, x1, s01);
    b = _mm256_broadcast_ss(w1 + c);
    s10 = _mm256_fmadd_ps(b, x0, s10);
    s11 = _mm256_fmadd_ps(b, x1, s11);
    b = _mm256_broadcast_ss(w2 + c);
    s20 = _mm256_fmadd_ps(b, x0, s20);
    s21 = _mm256_fmadd_ps(b, x1, s21);
    b = _mm256_broadcast_ss(w3 + c);
    s30 = _mm256_fmadd_ps(b, x0, s30);
    s31 = _mm256_fmadd_ps(b, x1, s31);
    b = _mm256_broadcast_ss(w4 + c);
    s40 = _mm256_fmadd_ps(b, x0, s40);
    s41 = _mm256_fmadd_ps(b, x1, s41);
    b = _mm256_broadcast_ss(w5 + c);
    s50 = _mm256_fmadd_ps(b, x0, s50);
    s51 = _mm256_fmadd_ps(b, x1, s51);
  }
  add_to(acc, s00);
  add_to(acc + 8, s01);
  add_to(acc + ld_acc, s10);
  add_to(acc + ld_acc + 8, s11);
  add_to(acc + 2 * ld_acc, s20);
  add_to(acc + 2 * ld_acc + 8, s21);
  add_to(acc + 3 * ld_acc, s30);
  add_to(acc + 3 * ld_acc + 8, s31);
  add_to(acc + 4 * ld_acc, s40);
  add_to(acc + 4 * ld_acc + 8, s41);
  add_to(acc + 5 * ld_acc, s50);
  add_to(acc + 5 * ld_acc + 8, s51);
}

// The same for the last 8 tokens of a group.
KILN_AVX2 void tile_6x8(const float* w, int64_t ld_w, const float* xt, int64_t ld_xt, int64_t k, float* acc,
                        int64_t ld_acc) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0;
  const float *w0 = w, *w1 = w + ld_w, *w2 = w + 2 * ld_w, *w3 = w + 3 * ld_w, *w4 = w + 4 * ld_w,
              *w5 = w + 5 * ld_w;
  for (int64_t c = 0; c < k; ++c, xt += ld_xt) {
    const __m256 x0 = _mm256_loadu_ps(xt);
    s0 = _mm256_fmadd_ps(_mm256_broadcast_ss(w0 + c), x0, s0);
    s1 = _mm256_fmadd_ps(_mm256_broadcast_ss(w1 + c), x0, s1);
    s2 = _mm256_fmadd_ps(_mm256_broadcast_ss(w2 + c), x0, s2);
    s3 = _mm256_fmadd_ps(_mm256_broadcast_ss(w3 + c), x0, s3);
    s4 = _mm256_fmadd_ps(_mm256_broadcast_ss(w4 + c), x0, s4);
    s5 = _mm256_fmadd_ps(_mm256_broadcast_ss(w5 + c), x0, s5);
  }
  add_to(acc, s0);
  add_to(acc + ld_acc, s1);
  add_to(acc + 2 * ld_acc, s2);
  add_to(acc + 3 * ld_acc, s3);
  add_to(acc + 4 * ld_acc, s4);
  add_to(acc + 5 * ld_acc, s5);
}

KILN_AVX2 void tile_product(const float* w, int64_t ld_w, const float* xt, int64_t ld_xt, int64_t tokens,
                            int64_t k, float* acc, int64_t ld_acc) {
  int64_t t = 0;
  for (; t + 16 <= tokens; t += 16) tile_6x16(w, ld_w, xt + t, ld_xt, k, acc + t, ld_acc);
  if (t < tokens) tile_6x8(w, ld_w, xt + t, ld_xt, k, acc + t, ld_acc);
}

}  // namespace

bool cpu_has_avx2_kernels() {
  __builtin_cpu_init();  // needed when called before static constructors have run
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

MatmulKernels avx2_matmul_kernels() {
  MatmulKernels k;
  k.name = "avx2";
  k.ops = avx2_op_kernels();
  k.dot_rows[static_cast<int>(DType::F32)] = dot_rows_float<DType::F32>;
  k.dot_rows[static_cast<int>(DType::F16)] = dot_rows_float<DType::F16>;
  k.dot_rows[static_cast<int>(DType::BF16)] = dot_rows_float<DType::BF16>;
  k.dot_rows[static_cast<int>(DType::Q8_0)] = dot_rows_blocks<BlockQ8_0, block_q8_0_dot>;
  k.dot_rows[static_cast<int>(DType::Q4_0)] = dot_rows_blocks<BlockQ4_0, block_q4_0_dot>;
  k.to_float[static_cast<int>(DType::F32)] = to_float_float<DType::F32>;
  k.to_float[static_cast<int>(DType::F16)] = to_float_float<DType::F16>;
  k.to_float[static_cast<int>(DType::BF16)] = to_float_float<DType::BF16>;
  k.to_float[static_cast<int>(DType::Q8_0)] = to_float_q8_0;
  k.to_float[static_cast<int>(DType::Q4_0)] = to_float_q4_0;
  k.tile_product = tile_product;
  add_avx2_kquant_kernels(k);
  add_avx2_q8_0_kernels(k);
  add_portable_block32_kernels(k);  // the float reference
  add_avx2_block32_kernels(k);
  add_portable_iq4xs_kernels(k);  // the float reference
  add_avx2_iq4xs_kernels(k);
  return k;
}

}  // namespace kiln

#else  // not x86-64: only the portable kernels exist

namespace kiln {
bool cpu_has_avx2_kernels() { return false; }
MatmulKernels avx2_matmul_kernels() { return portable_matmul_kernels(); }
}  // namespace kiln

#endif
