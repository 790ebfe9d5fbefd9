// AVX2 decode kernels for GGUF's K-quants (quant/kquant_blocks.h) against activations rounded to
// int8 (ActivationBlockQ8K). The sums are split as in matmul_kquant_portable.cpp; here each group
// of 32 weights is unpacked to one byte a weight (unsigned, 0..63), multiplied with 32 activations
// by vpmaddubsw (16 pair sums in int16, which cannot overflow: 2 * 63 * 127 < 32767), weighted by
// the sub-block scales with vpmaddwd into int32, and only a super-block's 8 partial sums go to float.
// Compiled for baseline x86-64 like matmul_avx2.cpp: only KILN_AVX2 functions use AVX2.
#include "runtime/cpu/matmul_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <cstring>

#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"

#define KILN_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace kiln {

namespace {

// As in matmul_avx2.cpp: software prefetch a little ahead of the block being read pays off.
constexpr uintptr_t kPrefetchBytes = 512;
KILN_AVX2 inline void prefetch_ahead(const void* p) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + kPrefetchBytes), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + kPrefetchBytes + 64), _MM_HINT_T0);
}

KILN_AVX2 inline float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

KILN_AVX2 inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
KILN_AVX2 inline __m256i bytes(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }

// The formats with 16 sub-blocks of 16 weights scale each group g of 32 weights (sub-blocks 2g and
// 2g + 1) by two scales. spread_scales() lays the 16 int8 scales out as int16, even sub-blocks in
// the low 128-bit lane and odd ones in the high lane, so that one in-lane byte shuffle gives a
// group's scale vector.
KILN_AVX2 inline __m256i spread_scales(__m128i scales) {
  const __m128i even_then_odd = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales, even_then_odd));
}

// 32 weights (unsigned bytes) of group g times 32 activations, weighted by their sub-blocks' scales:
// 8 int32 partial sums.
KILN_AVX2 inline __m256i scaled_dot32(__m256i q, const int8_t* xq, __m256i spread, int g) {
  const __m256i pairs = _mm256_maddubs_epi16(q, load32(xq));
  const __m256i scales = _mm256_shuffle_epi8(spread, _mm256_set1_epi16(static_cast<short>(0x0100 + 0x0202 * g)));
  return _mm256_madd_epi16(pairs, scales);
}

// sum_s scale[s] * sums[s] for 16 scales in int8, as 8 int32 partial sums.
KILN_AVX2 inline __m256i weighted_sums(__m128i scales, const int16_t* sums) {
  return _mm256_madd_epi16(_mm256_cvtepi8_epi16(scales), load32(sums));
}

KILN_AVX2 inline __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// unpack_q4k_scales (quant/kquants.h) in registers: bytes 0-7 the scales, 8-15 the mins. Reads 16
// bytes at `packed`, which in Q4_K / Q5_K blocks are the 12 scale bytes and the start of the quants.
KILN_AVX2 inline __m128i q4k_scales_and_mins(const uint8_t* packed) {
  const __m128i v = load16(packed);  // dwords w0, w1, w2
  const __m128i w2 = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 2, 2, 2));
  const __m128i low = _mm_and_si128(v, _mm_set1_epi32(0x3f3f3f3f));  // scales 0-3, mins 0-3
  const __m128i high = _mm_or_si128(_mm_and_si128(_mm_srlv_epi32(w2, _mm_setr_epi32(0, 4, 0, 0)), _mm_set1_epi32(0x0f0f0f0f)),
                                    _mm_and_si128(_mm_srli_epi32(v, 2), _mm_set1_epi32(0x30303030)));  // 4-7
  return _mm_unpacklo_epi32(low, high);
}

// unpack_q3k_scales in registers: the 16 signed scales as int8.
KILN_AVX2 inline __m128i q3k_scales(const uint8_t* packed) {
  uint32_t w2;
  std::memcpy(&w2, packed + 8, 4);
  const __m128i w01 = _mm_shuffle_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(packed)), _MM_SHUFFLE(1, 0, 1, 0));
  const __m128i low = _mm_and_si128(_mm_srlv_epi32(w01, _mm_setr_epi32(0, 0, 4, 4)), _mm_set1_epi32(0x0f0f0f0f));
  const __m128i top = _mm_srlv_epi32(_mm_sllv_epi32(_mm_set1_epi32(static_cast<int>(w2)), _mm_setr_epi32(4, 2, 0, 0)),
                                     _mm_setr_epi32(0, 0, 0, 2));
  return _mm_sub_epi8(_mm_or_si128(low, _mm_and_si128(top, _mm_set1_epi32(0x30303030))), _mm_set1_epi8(32));
}

// Q4_K and Q5_K: chunk c of 64 weights is the low nibbles (sub-block 2c) then the high nibbles
// (2c + 1) of qs[32c ..]; Q5_K adds bit 2c / 2c + 1 of qh[l] as bit 4.
template <bool kFifthBit, typename Block>
KILN_AVX2 void dot_rows_q45k(const uint8_t* w, size_t stride, int64_t rows, int64_t cols,
                             const ActivationBlockQ8K* x, float* y) {
  const int64_t blocks = cols / kSuperBlockSize;
  const __m256i nibble = bytes(0x0F);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = reinterpret_cast<const Block*>(w + r * stride);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      const Block& wb = row[b];
      const ActivationBlockQ8K& a = x[b];
      prefetch_ahead(&wb);
      const __m128i scales_mins = q4k_scales_and_mins(wb.scales);
      const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));  // int16, both lanes
      // Offsets: min[s] times the activation sums of its two 16-weight halves.
      const __m128i mins = _mm_srli_si128(scales_mins, 8);
      const __m256i offsets = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins, mins)), load32(a.sums));
      __m256i sum = _mm256_setzero_si256();
      [[maybe_unused]] __m256i high_bits;
      if constexpr (kFifthBit) high_bits = load32(wb.qh);
      for (int c = 0; c < 4; ++c) {
        const __m256i packed = load32(wb.qs + 32 * c);
        __m256i q0 = _mm256_and_si256(packed, nibble);
        __m256i q1 = _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
        if constexpr (kFifthBit) {  // bits 0 and 1 of high_bits (shifted 2c down) move to bit 4
          q0 = _mm256_or_si256(q0, _mm256_and_si256(_mm256_slli_epi16(high_bits, 4), bytes(0x10)));
          q1 = _mm256_or_si256(q1, _mm256_and_si256(_mm256_slli_epi16(high_bits, 3), bytes(0x10)));
          high_bits = _mm256_srli_epi16(high_bits, 2);
        }
        const __m256i s0 = _mm256_shuffle_epi8(scales, _mm256_set1_epi16(static_cast<short>(0x0100 + 0x0404 * c)));
        const __m256i s1 = _mm256_shuffle_epi8(scales, _mm256_set1_epi16(static_cast<short>(0x0302 + 0x0404 * c)));
        const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(q0, load32(a.q + 64 * c)), s0);
        const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(q1, load32(a.q + 64 * c + 32)), s1);
        sum = _mm256_add_epi32(sum, _mm256_add_epi32(p0, p1));
      }
      acc = _mm256_fmadd_ps(_mm256_set1_ps(a.d * _cvtsh_ss(wb.d)), _mm256_cvtepi32_ps(sum), acc);
      acc = _mm256_fnmadd_ps(_mm256_set1_ps(a.d * _cvtsh_ss(wb.dmin)), _mm256_cvtepi32_ps(offsets), acc);
    }
    y[r] = horizontal_sum(acc);
  }
}

// Q6_K: for each half h, weights 32 j + l take the low (j < 2) or high nibble of ql[64 h + 32 (j % 2) + l]
// and bits 2j, 2j + 1 of qh[32 h + l] as bits 4, 5. Weight = q - 32.
KILN_AVX2 void dot_rows_q6k(const uint8_t* w, size_t stride, int64_t rows, int64_t cols,
                            const ActivationBlockQ8K* x, float* y) {
  const int64_t blocks = cols / kSuperBlockSize;
  const __m256i nibble = bytes(0x0F), bits45 = bytes(0x30);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = reinterpret_cast<const BlockQ6K*>(w + r * stride);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      const BlockQ6K& wb = row[b];
      const ActivationBlockQ8K& a = x[b];
      prefetch_ahead(&wb);
      const __m128i scales = load16(wb.scales);
      const __m256i spread = spread_scales(scales);
      __m256i sum = _mm256_setzero_si256();
      for (int h = 0; h < 2; ++h) {
        const __m256i low0 = load32(wb.ql + 64 * h), low1 = load32(wb.ql + 64 * h + 32);
        const __m256i high = load32(wb.qh + 32 * h);
        const __m256i q0 = _mm256_or_si256(_mm256_and_si256(low0, nibble),
                                           _mm256_and_si256(_mm256_slli_epi16(high, 4), bits45));
        const __m256i q1 = _mm256_or_si256(_mm256_and_si256(low1, nibble),
                                           _mm256_and_si256(_mm256_slli_epi16(high, 2), bits45));
        const __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low0, 4), nibble),
                                           _mm256_and_si256(high, bits45));
        const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low1, 4), nibble),
                                           _mm256_and_si256(_mm256_srli_epi16(high, 2), bits45));
        const int8_t* xq = a.q + 128 * h;
        sum = _mm256_add_epi32(sum, _mm256_add_epi32(scaled_dot32(q0, xq, spread, 4 * h),
                                                     scaled_dot32(q1, xq + 32, spread, 4 * h + 1)));
        sum = _mm256_add_epi32(sum, _mm256_add_epi32(scaled_dot32(q2, xq + 64, spread, 4 * h + 2),
                                                     scaled_dot32(q3, xq + 96, spread, 4 * h + 3)));
      }
      sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(weighted_sums(scales, a.sums), 5));  // q - 32
      acc = _mm256_fmadd_ps(_mm256_set1_ps(a.d * _cvtsh_ss(wb.d)), _mm256_cvtepi32_ps(sum), acc);
    }
    y[r] = horizontal_sum(acc);
  }
}

// Q3_K: q = bits 2j of qs[32 h + l] plus 4 * (bit 4 h + j of hmask[l]); weight = q - 4.
KILN_AVX2 void dot_rows_q3k(const uint8_t* w, size_t stride, int64_t rows, int64_t cols,
                            const ActivationBlockQ8K* x, float* y) {
  const int64_t blocks = cols / kSuperBlockSize;
  const __m256i two_bits = bytes(3), four = bytes(4);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = reinterpret_cast<const BlockQ3K*>(w + r * stride);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      const BlockQ3K& wb = row[b];
      const ActivationBlockQ8K& a = x[b];
      prefetch_ahead(&wb);
      const __m128i scales = q3k_scales(wb.scales);
      const __m256i spread = spread_scales(scales);
      __m256i hmask = load32(wb.hmask);  // shifted down one bit a group: bit 0 is the group's
      __m256i sum = _mm256_setzero_si256();
      for (int h = 0; h < 2; ++h) {
        const __m256i packed = load32(wb.qs + 32 * h);
        for (int j = 0; j < 4; ++j) {
          const __m256i high = _mm256_and_si256(_mm256_slli_epi16(hmask, 2), four);
          hmask = _mm256_srli_epi16(hmask, 1);
          const __m256i q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(packed, 2 * j), two_bits), high);
          sum = _mm256_add_epi32(sum, scaled_dot32(q, a.q + 128 * h + 32 * j, spread, 4 * h + j));
        }
      }
      sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(weighted_sums(scales, a.sums), 2));  // q - 4
      acc = _mm256_fmadd_ps(_mm256_set1_ps(a.d * _cvtsh_ss(wb.d)), _mm256_cvtepi32_ps(sum), acc);
    }
    y[r] = horizontal_sum(acc);
  }
}

// Q2_K: q = bits 2j of qs[32 h + l]; scales[s] holds the sub-block's scale (low nibble) and min (high).
KILN_AVX2 void dot_rows_q2k(const uint8_t* w, size_t stride, int64_t rows, int64_t cols,
                            const ActivationBlockQ8K* x, float* y) {
  const int64_t blocks = cols / kSuperBlockSize;
  const __m256i two_bits = bytes(3);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = reinterpret_cast<const BlockQ2K*>(w + r * stride);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      const BlockQ2K& wb = row[b];
      const ActivationBlockQ8K& a = x[b];
      prefetch_ahead(&wb);
      const __m128i packed_scales = load16(wb.scales), low4 = _mm_set1_epi8(0x0F);
      const __m256i spread = spread_scales(_mm_and_si128(packed_scales, low4));
      const __m128i mins = _mm_and_si128(_mm_srli_epi16(packed_scales, 4), low4);
      __m256i sum = _mm256_setzero_si256();
      for (int h = 0; h < 2; ++h) {
        const __m256i packed = load32(wb.qs + 32 * h);
        for (int j = 0; j < 4; ++j) {
          const __m256i q = _mm256_and_si256(_mm256_srli_epi16(packed, 2 * j), two_bits);
          sum = _mm256_add_epi32(sum, scaled_dot32(q, a.q + 128 * h + 32 * j, spread, 4 * h + j));
        }
      }
      acc = _mm256_fmadd_ps(_mm256_set1_ps(a.d * _cvtsh_ss(wb.d)), _mm256_cvtepi32_ps(sum), acc);
      acc = _mm256_fnmadd_ps(_mm256_set1_ps(a.d * _cvtsh_ss(wb.dmin)), _mm256_cvtepi32_ps(weighted_sums(mins, a.sums)), acc);
    }
    y[r] = horizontal_sum(acc);
  }
}

// ---- Expansion to floats for prefill: the same unpacking, then w = scale * q + offset per 16 weights.

// The low 8 unsigned bytes as floats.
KILN_AVX2 inline __m256 as_float(__m128i bytes8) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes8)); }

// dst[0..32) = scale * q + offset for 32 weights q (unsigned bytes); the first 16 take (scale_a,
// offset_a), the last 16 (scale_b, offset_b).
KILN_AVX2 inline void store32(float* dst, __m256i q, float scale_a, float offset_a, float scale_b, float offset_b) {
  const __m128i low = _mm256_castsi256_si128(q), high = _mm256_extracti128_si256(q, 1);
  const __m256 sa = _mm256_set1_ps(scale_a), oa = _mm256_set1_ps(offset_a);
  const __m256 sb = _mm256_set1_ps(scale_b), ob = _mm256_set1_ps(offset_b);
  _mm256_storeu_ps(dst, _mm256_fmadd_ps(sa, as_float(low), oa));
  _mm256_storeu_ps(dst + 8, _mm256_fmadd_ps(sa, as_float(_mm_unpackhi_epi64(low, low)), oa));
  _mm256_storeu_ps(dst + 16, _mm256_fmadd_ps(sb, as_float(high), ob));
  _mm256_storeu_ps(dst + 24, _mm256_fmadd_ps(sb, as_float(_mm_unpackhi_epi64(high, high)), ob));
}

template <bool kFifthBit, typename Block>
KILN_AVX2 void to_float_q45k(const uint8_t* src, int64_t n, float* dst) {
  const auto* blocks = reinterpret_cast<const Block*>(src);
  const __m256i nibble = bytes(0x0F);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b) {
    const Block& wb = blocks[b];
    const float d = _cvtsh_ss(wb.d), dmin = _cvtsh_ss(wb.dmin);
    uint8_t scale[8], min[8];
    unpack_q4k_scales(wb.scales, scale, min);
    [[maybe_unused]] __m256i high_bits;
    if constexpr (kFifthBit) high_bits = load32(wb.qh);
    for (int s = 0; s < 8; ++s, dst += 32) {  // sub-block s: nibble s % 2 of qs[32 (s / 2) ..]
      const __m256i packed = load32(wb.qs + 32 * (s / 2));
      __m256i q = _mm256_and_si256(s % 2 ? _mm256_srli_epi16(packed, 4) : packed, nibble);
      if constexpr (kFifthBit) {
        q = _mm256_or_si256(q, _mm256_and_si256(_mm256_slli_epi16(high_bits, 4), bytes(0x10)));
        high_bits = _mm256_srli_epi16(high_bits, 1);
      }
      const float sc = d * scale[s], offset = -dmin * min[s];
      store32(dst, q, sc, offset, sc, offset);
    }
  }
}

KILN_AVX2 void to_float_q6k(const uint8_t* src, int64_t n, float* dst) {
  const auto* blocks = reinterpret_cast<const BlockQ6K*>(src);
  const __m256i nibble = bytes(0x0F), bits45 = bytes(0x30);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b) {
    const BlockQ6K& wb = blocks[b];
    const float d = _cvtsh_ss(wb.d);
    for (int h = 0; h < 2; ++h) {
      const __m256i low0 = load32(wb.ql + 64 * h), low1 = load32(wb.ql + 64 * h + 32);
      const __m256i high = load32(wb.qh + 32 * h);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(low0, nibble), _mm256_and_si256(_mm256_slli_epi16(high, 4), bits45)),
          _mm256_or_si256(_mm256_and_si256(low1, nibble), _mm256_and_si256(_mm256_slli_epi16(high, 2), bits45)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low0, 4), nibble), _mm256_and_si256(high, bits45)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low1, 4), nibble),
                          _mm256_and_si256(_mm256_srli_epi16(high, 2), bits45))};
      for (int j = 0; j < 4; ++j, dst += 32) {
        const float sa = d * wb.scales[8 * h + 2 * j], sb = d * wb.scales[8 * h + 2 * j + 1];
        store32(dst, q[j], sa, -32.0f * sa, sb, -32.0f * sb);
      }
    }
  }
}

KILN_AVX2 void to_float_q3k(const uint8_t* src, int64_t n, float* dst) {
  const auto* blocks = reinterpret_cast<const BlockQ3K*>(src);
  const __m256i two_bits = bytes(3), four = bytes(4);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b) {
    const BlockQ3K& wb = blocks[b];
    const float d = _cvtsh_ss(wb.d);
    int8_t sc[16];
    unpack_q3k_scales(wb.scales, sc);
    const __m256i hmask = load32(wb.hmask);
    for (int h = 0; h < 2; ++h) {
      const __m256i packed = load32(wb.qs + 32 * h);
      for (int j = 0; j < 4; ++j, dst += 32) {
        const __m256i bit = bytes(1 << (4 * h + j));
        const __m256i high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), bit), four);
        const __m256i q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(packed, 2 * j), two_bits), high);
        const float sa = d * sc[8 * h + 2 * j], sb = d * sc[8 * h + 2 * j + 1];
        store32(dst, q, sa, -4.0f * sa, sb, -4.0f * sb);
      }
    }
  }
}

KILN_AVX2 void to_float_q2k(const uint8_t* src, int64_t n, float* dst) {
  const auto* blocks = reinterpret_cast<const BlockQ2K*>(src);
  const __m256i two_bits = bytes(3);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b) {
    const BlockQ2K& wb = blocks[b];
    const float d = _cvtsh_ss(wb.d), dmin = _cvtsh_ss(wb.dmin);
    for (int h = 0; h < 2; ++h) {
      const __m256i packed = load32(wb.qs + 32 * h);
      for (int j = 0; j < 4; ++j, dst += 32) {
        const int s = 8 * h + 2 * j;
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(packed, 2 * j), two_bits);
        store32(dst, q, d * (wb.scales[s] & 15), -dmin * (wb.scales[s] >> 4), d * (wb.scales[s + 1] & 15),
                -dmin * (wb.scales[s + 1] >> 4));
      }
    }
  }
}

}  // namespace

void add_avx2_kquant_kernels(MatmulKernels& k) {
  k.to_float[static_cast<int>(DType::Q4_K)] = to_float_q45k<false, BlockQ4K>;
  k.to_float[static_cast<int>(DType::Q5_K)] = to_float_q45k<true, BlockQ5K>;
  k.to_float[static_cast<int>(DType::Q6_K)] = to_float_q6k;
  k.to_float[static_cast<int>(DType::Q3_K)] = to_float_q3k;
  k.to_float[static_cast<int>(DType::Q2_K)] = to_float_q2k;
  k.dot_rows_q8k[static_cast<int>(DType::Q4_K)] = dot_rows_q45k<false, BlockQ4K>;
  k.dot_rows_q8k[static_cast<int>(DType::Q5_K)] = dot_rows_q45k<true, BlockQ5K>;
  k.dot_rows_q8k[static_cast<int>(DType::Q6_K)] = dot_rows_q6k;
  k.dot_rows_q8k[static_cast<int>(DType::Q3_K)] = dot_rows_q3k;
  k.dot_rows_q8k[static_cast<int>(DType::Q2_K)] = dot_rows_q2k;
}

}  // namespace kiln

#else  // not x86-64: the portable K-quant kernels stand in

namespace kiln {
void add_avx2_kquant_kernels(MatmulKernels& k) { add_portable_kquant_kernels(k); }
}  // namespace kiln

#endif
