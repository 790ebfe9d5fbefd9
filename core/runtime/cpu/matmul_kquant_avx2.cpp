// AVX2 matmul kernels for GGUF's K-quants (quant/kquant_blocks.h) against activations rounded to
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

// Group g's scales from spread_scales(): int16 lanes 0-7 the scale of sub-block 2g, 8-15 of 2g + 1.
KILN_AVX2 inline __m256i group_scales(__m256i spread, int g) {
  return _mm256_shuffle_epi8(spread, _mm256_set1_epi16(static_cast<short>(0x0100 + 0x0202 * g)));
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

// The kernels below take T tokens at once (T <= 4): each super-block is unpacked once and applied
// to every token, so prefill pays the unpacking once per 4 tokens. sum[t] and acc[t] stay in
// registers when the token loops are unrolled.
#define KILN_EACH_TOKEN _Pragma("GCC unroll 4") for (int t = 0; t < T; ++t)

// 32 weights (unsigned bytes) times 32 activations, weighted per 16 by `scales` (int16): 8 int32 sums.
KILN_AVX2 inline __m256i dot32(__m256i q, const int8_t* xq, __m256i scales) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(q, load32(xq)), scales);
}

// Q4_K and Q5_K: chunk c of 64 weights is the low nibbles (sub-block 2c) then the high nibbles
// (2c + 1) of qs[32c ..]; Q5_K adds bit 2c / 2c + 1 of qh[l] as bit 4.
template <bool kFifthBit, typename Block>
struct Q45K {
  template <int T>
  static KILN_AVX2 void rows(const uint8_t* w, size_t stride, int64_t rows, int64_t blocks,
                             const ActivationBlockQ8K* x, float* y, int64_t ld_y) {
    const __m256i nibble = bytes(0x0F);
    for (int64_t r = 0; r < rows; ++r) {
      const auto* row = reinterpret_cast<const Block*>(w + r * stride);
      __m256 acc[T];
      KILN_EACH_TOKEN acc[t] = _mm256_setzero_ps();
      for (int64_t b = 0; b < blocks; ++b) {
        const Block& wb = row[b];
        prefetch_ahead(&wb);
        const __m128i scales_mins = q4k_scales_and_mins(wb.scales);
        const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));  // int16, both lanes
        __m256i sum[T];
        KILN_EACH_TOKEN sum[t] = _mm256_setzero_si256();
        [[maybe_unused]] __m256i high_bits;
        if constexpr (kFifthBit) high_bits = load32(wb.qh);
#pragma GCC unroll 4
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
          KILN_EACH_TOKEN {
            const int8_t* xq = x[t * blocks + b].q + 64 * c;
            sum[t] = _mm256_add_epi32(sum[t], _mm256_add_epi32(dot32(q0, xq, s0), dot32(q1, xq + 32, s1)));
          }
        }
        // Offsets: min[s] times the activation sums of its two 16-weight halves.
        const __m128i mins = _mm_srli_si128(scales_mins, 8);
        const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins, mins));
        const float d = _cvtsh_ss(wb.d), dmin = _cvtsh_ss(wb.dmin);
        KILN_EACH_TOKEN {
          const ActivationBlockQ8K& a = x[t * blocks + b];
          const __m256i offsets = _mm256_madd_epi16(mins16, load32(a.sums));
          acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(a.d * d), _mm256_cvtepi32_ps(sum[t]), acc[t]);
          acc[t] = _mm256_fnmadd_ps(_mm256_set1_ps(a.d * dmin), _mm256_cvtepi32_ps(offsets), acc[t]);
        }
      }
      KILN_EACH_TOKEN y[t * ld_y + r] = horizontal_sum(acc[t]);
    }
  }
};

// Q6_K: for each half h, weights 32 j + l take the low (j < 2) or high nibble of ql[64 h + 32 (j % 2) + l]
// and bits 2j, 2j + 1 of qh[32 h + l] as bits 4, 5. Weight = q - 32.
struct Q6K {
  template <int T>
  static KILN_AVX2 void rows(const uint8_t* w, size_t stride, int64_t rows, int64_t blocks,
                             const ActivationBlockQ8K* x, float* y, int64_t ld_y) {
    const __m256i nibble = bytes(0x0F), bits45 = bytes(0x30);
    for (int64_t r = 0; r < rows; ++r) {
      const auto* row = reinterpret_cast<const BlockQ6K*>(w + r * stride);
      __m256 acc[T];
      KILN_EACH_TOKEN acc[t] = _mm256_setzero_ps();
      for (int64_t b = 0; b < blocks; ++b) {
        const BlockQ6K& wb = row[b];
        prefetch_ahead(&wb);
        const __m128i scales = load16(wb.scales);
        const __m256i spread = spread_scales(scales);
        __m256i sum[T];
        KILN_EACH_TOKEN sum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {  // group g = 4 h + j: 32 weights, sub-blocks 2g and 2g + 1
          const int h = g / 4, j = g % 4;
          const __m256i low = load32(wb.ql + 64 * h + 32 * (j % 2));
          const __m256i high = load32(wb.qh + 32 * h);
          const __m256i low4 = _mm256_and_si256(j < 2 ? low : _mm256_srli_epi16(low, 4), nibble);
          const __m256i high2 = _mm256_and_si256(j == 0 ? _mm256_slli_epi16(high, 4)
                                                 : j == 1 ? _mm256_slli_epi16(high, 2)
                                                 : j == 2 ? high : _mm256_srli_epi16(high, 2), bits45);
          const __m256i q = _mm256_or_si256(low4, high2);
          const __m256i sc = group_scales(spread, g);
          KILN_EACH_TOKEN sum[t] = _mm256_add_epi32(sum[t], dot32(q, x[t * blocks + b].q + 32 * g, sc));
        }
        const __m256i scales16 = _mm256_cvtepi8_epi16(scales);
        const float d = _cvtsh_ss(wb.d);
        KILN_EACH_TOKEN {
          const ActivationBlockQ8K& a = x[t * blocks + b];
          const __m256i offsets = _mm256_slli_epi32(_mm256_madd_epi16(scales16, load32(a.sums)), 5);  // q - 32
          acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(a.d * d), _mm256_cvtepi32_ps(_mm256_sub_epi32(sum[t], offsets)), acc[t]);
        }
      }
      KILN_EACH_TOKEN y[t * ld_y + r] = horizontal_sum(acc[t]);
    }
  }
};

// Q3_K: q = bits 2j of qs[32 h + l] plus 4 * (bit 4 h + j of hmask[l]); weight = q - 4.
struct Q3K {
  template <int T>
  static KILN_AVX2 void rows(const uint8_t* w, size_t stride, int64_t rows, int64_t blocks,
                             const ActivationBlockQ8K* x, float* y, int64_t ld_y) {
    const __m256i two_bits = bytes(3), four = bytes(4);
    for (int64_t r = 0; r < rows; ++r) {
      const auto* row = reinterpret_cast<const BlockQ3K*>(w + r * stride);
      __m256 acc[T];
      KILN_EACH_TOKEN acc[t] = _mm256_setzero_ps();
      for (int64_t b = 0; b < blocks; ++b) {
        const BlockQ3K& wb = row[b];
        prefetch_ahead(&wb);
        const __m128i scales = q3k_scales(wb.scales);
        const __m256i spread = spread_scales(scales);
        __m256i hmask = load32(wb.hmask);  // shifted down one bit a group: bit 0 is the group's
        __m256i sum[T];
        KILN_EACH_TOKEN sum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {  // group g = 4 h + j
          const __m256i packed = load32(wb.qs + 32 * (g / 4));
          const __m256i high = _mm256_and_si256(_mm256_slli_epi16(hmask, 2), four);
          hmask = _mm256_srli_epi16(hmask, 1);
          const __m256i q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(packed, 2 * (g % 4)), two_bits), high);
          const __m256i sc = group_scales(spread, g);
          KILN_EACH_TOKEN sum[t] = _mm256_add_epi32(sum[t], dot32(q, x[t * blocks + b].q + 32 * g, sc));
        }
        const __m256i scales16 = _mm256_cvtepi8_epi16(scales);
        const float d = _cvtsh_ss(wb.d);
        KILN_EACH_TOKEN {
          const ActivationBlockQ8K& a = x[t * blocks + b];
          const __m256i offsets = _mm256_slli_epi32(_mm256_madd_epi16(scales16, load32(a.sums)), 2);  // q - 4
          acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(a.d * d), _mm256_cvtepi32_ps(_mm256_sub_epi32(sum[t], offsets)), acc[t]);
        }
      }
      KILN_EACH_TOKEN y[t * ld_y + r] = horizontal_sum(acc[t]);
    }
  }
};

// Q2_K: q = bits 2j of qs[32 h + l]; scales[s] holds the sub-block's scale (low nibble) and min (high).
struct Q2K {
  template <int T>
  static KILN_AVX2 void rows(const uint8_t* w, size_t stride, int64_t rows, int64_t blocks,
                             const ActivationBlockQ8K* x, float* y, int64_t ld_y) {
    const __m256i two_bits = bytes(3);
    for (int64_t r = 0; r < rows; ++r) {
      const auto* row = reinterpret_cast<const BlockQ2K*>(w + r * stride);
      __m256 acc[T];
      KILN_EACH_TOKEN acc[t] = _mm256_setzero_ps();
      for (int64_t b = 0; b < blocks; ++b) {
        const BlockQ2K& wb = row[b];
        prefetch_ahead(&wb);
        const __m128i packed_scales = load16(wb.scales), low4 = _mm_set1_epi8(0x0F);
        const __m256i spread = spread_scales(_mm_and_si128(packed_scales, low4));
        __m256i sum[T];
        KILN_EACH_TOKEN sum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {  // group g = 4 h + j
          const __m256i q = _mm256_and_si256(_mm256_srli_epi16(load32(wb.qs + 32 * (g / 4)), 2 * (g % 4)), two_bits);
          const __m256i sc = group_scales(spread, g);
          KILN_EACH_TOKEN sum[t] = _mm256_add_epi32(sum[t], dot32(q, x[t * blocks + b].q + 32 * g, sc));
        }
        const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed_scales, 4), low4));
        const float d = _cvtsh_ss(wb.d), dmin = _cvtsh_ss(wb.dmin);
        KILN_EACH_TOKEN {
          const ActivationBlockQ8K& a = x[t * blocks + b];
          const __m256i offsets = _mm256_madd_epi16(mins16, load32(a.sums));
          acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(a.d * d), _mm256_cvtepi32_ps(sum[t]), acc[t]);
          acc[t] = _mm256_fnmadd_ps(_mm256_set1_ps(a.d * dmin), _mm256_cvtepi32_ps(offsets), acc[t]);
        }
      }
      KILN_EACH_TOKEN y[t * ld_y + r] = horizontal_sum(acc[t]);
    }
  }
};

#undef KILN_EACH_TOKEN

// Any number of tokens, four at a time.
template <class Format>
KILN_AVX2 void dot_rows(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const ActivationBlockQ8K* x,
                        int64_t tokens, float* y, int64_t ld_y) {
  const int64_t blocks = cols / kSuperBlockSize;
  int64_t t = 0;
  for (; t + 4 <= tokens; t += 4) Format::template rows<4>(w, stride, rows, blocks, x + t * blocks, y + t * ld_y, ld_y);
  switch (tokens - t) {
    case 3: Format::template rows<3>(w, stride, rows, blocks, x + t * blocks, y + t * ld_y, ld_y); break;
    case 2: Format::template rows<2>(w, stride, rows, blocks, x + t * blocks, y + t * ld_y, ld_y); break;
    case 1: Format::template rows<1>(w, stride, rows, blocks, x + t * blocks, y + t * ld_y, ld_y); break;
    default: break;
  }
}

}  // namespace

void add_avx2_kquant_kernels(MatmulKernels& k) {
  k.dot_rows_q8k[static_cast<int>(DType::Q4_K)] = dot_rows<Q45K<false, BlockQ4K>>;
  k.dot_rows_q8k[static_cast<int>(DType::Q5_K)] = dot_rows<Q45K<true, BlockQ5K>>;
  k.dot_rows_q8k[static_cast<int>(DType::Q6_K)] = dot_rows<Q6K>;
  k.dot_rows_q8k[static_cast<int>(DType::Q3_K)] = dot_rows<Q3K>;
  k.dot_rows_q8k[static_cast<int>(DType::Q2_K)] = dot_rows<Q2K>;
}

}  // namespace kiln

#else  // not x86-64: the portable K-quant kernels stand in

namespace kiln {
void add_avx2_kquant_kernels(MatmulKernels& k) { add_portable_kquant_kernels(k); }
}  // namespace kiln

#endif
