// Portable matmul kernels for GGUF's K-quants (quant/kquant_blocks.h), and the rounding of
// activations to int8 that they and the SIMD sets share. Plain integer loops: the reference the
// SIMD kernels are tested against, written to follow the block layouts line by line.
//
// Every K-quant weight is an affine function of a small integer q inside a sub-block,
//   w = a_s * q + b_s  (a_s = d * scale_s, b_s = -dmin * min_s or a fixed offset times a_s),
// so with activations x ~ dx * qx a super-block's dot product splits into integer sums:
//   sum w x = dx * (sum_s a_s * sum_{i in s} q_i qx_i  +  sum_s b_s * sum_{i in s} qx_i),
// and the second sums are ActivationBlockQ8K::sums, computed once per token.
#include <algorithm>
#include <cmath>
#include <limits>

#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"
#include "runtime/cpu/matmul_kernels.h"

namespace kiln {

void quantize_activations_q8k(const float* x, int64_t cols, ActivationBlockQ8K* out) {
  for (int64_t b = 0; b < cols / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    ActivationBlockQ8K& a = out[b];
    float amax = 0.0f;
    bool finite = true;
    for (int i = 0; i < kSuperBlockSize; ++i) {
      amax = std::max(amax, std::fabs(x[i]));
      finite = finite && std::isfinite(x[i]);
    }
    const float d = amax / 127.0f;
    const float inverse = d > 0.0f ? 1.0f / d : 0.0f;
    // A block holding inf or nan keeps no numbers: its d is nan, so every dot with it is nan.
    a.d = finite ? d : std::numeric_limits<float>::quiet_NaN();
    for (int i = 0; i < kSuperBlockSize; ++i) {
      const float q = finite ? std::nearbyint(x[i] * inverse) : 0.0f;
      a.q[i] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
    }
    for (int k = 0; k < kSuperBlockSize / 16; ++k) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += a.q[16 * k + i];
      a.sums[k] = static_cast<int16_t>(sum);
    }
  }
}

namespace {

float row_dot_q4k(const BlockQ4K* blocks, int64_t count, const ActivationBlockQ8K* x) {
  float total = 0.0f;
  for (int64_t b = 0; b < count; ++b) {
    const BlockQ4K& wb = blocks[b];
    const ActivationBlockQ8K& a = x[b];
    uint8_t scale[8], min[8];
    unpack_q4k_scales(wb.scales, scale, min);
    int dot = 0, offset = 0;
    for (int c = 0; c < 4; ++c) {  // 64 weights: low nibbles are sub-block 2c, high nibbles 2c + 1
      int low = 0, high = 0;
      for (int l = 0; l < 32; ++l) {
        low += (wb.qs[32 * c + l] & 0x0F) * a.q[64 * c + l];
        high += (wb.qs[32 * c + l] >> 4) * a.q[64 * c + 32 + l];
      }
      dot += scale[2 * c] * low + scale[2 * c + 1] * high;
    }
    for (int s = 0; s < 8; ++s) offset += min[s] * (a.sums[2 * s] + a.sums[2 * s + 1]);
    total += a.d * (fp16_to_float(wb.d) * float(dot) - fp16_to_float(wb.dmin) * float(offset));
  }
  return total;
}

float row_dot_q5k(const BlockQ5K* blocks, int64_t count, const ActivationBlockQ8K* x) {
  float total = 0.0f;
  for (int64_t b = 0; b < count; ++b) {
    const BlockQ5K& wb = blocks[b];
    const ActivationBlockQ8K& a = x[b];
    uint8_t scale[8], min[8];
    unpack_q4k_scales(wb.scales, scale, min);
    int dot = 0, offset = 0;
    for (int c = 0; c < 4; ++c) {  // as Q4_K, with bit s of qh[l] the fifth bit of sub-block s
      int low = 0, high = 0;
      for (int l = 0; l < 32; ++l) {
        const int q0 = (wb.qs[32 * c + l] & 0x0F) | (((wb.qh[l] >> (2 * c)) & 1) << 4);
        const int q1 = (wb.qs[32 * c + l] >> 4) | (((wb.qh[l] >> (2 * c + 1)) & 1) << 4);
        low += q0 * a.q[64 * c + l];
        high += q1 * a.q[64 * c + 32 + l];
      }
      dot += scale[2 * c] * low + scale[2 * c + 1] * high;
    }
    for (int s = 0; s < 8; ++s) offset += min[s] * (a.sums[2 * s] + a.sums[2 * s + 1]);
    total += a.d * (fp16_to_float(wb.d) * float(dot) - fp16_to_float(wb.dmin) * float(offset));
  }
  return total;
}

// The formats with 16 sub-blocks of 16 weights number weight i = 128 h + 32 j + l (h < 2, j < 4,
// l < 32). Sub-block s holds h = s / 8, j = s / 2 % 4, l = 16 (s % 2) .. + 16, activations
// 16 s .. 16 s + 16; each sum below runs over one sub-block with fixed shifts, a loop compilers
// vectorize.
float row_dot_q6k(const BlockQ6K* blocks, int64_t count, const ActivationBlockQ8K* x) {
  float total = 0.0f;
  for (int64_t b = 0; b < count; ++b) {
    const BlockQ6K& wb = blocks[b];
    const ActivationBlockQ8K& a = x[b];
    int dot = 0;
    for (int s = 0; s < 16; ++s) {
      const int h = s / 8, j = s / 2 % 4, l0 = 16 * (s % 2);
      const uint8_t* low = wb.ql + 64 * h + 32 * (j % 2) + l0;  // low 4 bits: a nibble
      const uint8_t* high = wb.qh + 32 * h + l0;                 // high 2 bits: bits 2j, 2j + 1
      const int low_shift = j < 2 ? 0 : 4, high_shift = 2 * j;
      int sum = 0;
#pragma GCC unroll 1  // unrolled whole, this loop is no longer vectorized (GCC 12)
      for (int i = 0; i < 16; ++i) {
        const int16_t q = static_cast<int16_t>(((low[i] >> low_shift) & 0x0F) | (((high[i] >> high_shift) & 3) << 4));
        sum += q * int16_t{a.q[16 * s + i]};  // weight q - 32; int16 products vectorize everywhere
      }
      dot += wb.scales[s] * (sum - 32 * a.sums[s]);
    }
    total += a.d * fp16_to_float(wb.d) * float(dot);
  }
  return total;
}

float row_dot_q3k(const BlockQ3K* blocks, int64_t count, const ActivationBlockQ8K* x) {
  float total = 0.0f;
  for (int64_t b = 0; b < count; ++b) {
    const BlockQ3K& wb = blocks[b];
    const ActivationBlockQ8K& a = x[b];
    int8_t scale[16];
    unpack_q3k_scales(wb.scales, scale);
    int dot = 0;
    for (int s = 0; s < 16; ++s) {
      const int h = s / 8, j = s / 2 % 4, l0 = 16 * (s % 2);
      int sum = 0;
      for (int i = 0; i < 16; ++i) {
        // q + 4 * hbit is 0..7 and the weight (q - (hbit ? 0 : 4)) is that minus 4.
        const int q = ((wb.qs[32 * h + l0 + i] >> (2 * j)) & 3) | (((wb.hmask[l0 + i] >> (4 * h + j)) & 1) << 2);
        sum += q * a.q[16 * s + i];
      }
      dot += scale[s] * (sum - 4 * a.sums[s]);
    }
    total += a.d * fp16_to_float(wb.d) * float(dot);
  }
  return total;
}

float row_dot_q2k(const BlockQ2K* blocks, int64_t count, const ActivationBlockQ8K* x) {
  float total = 0.0f;
  for (int64_t b = 0; b < count; ++b) {
    const BlockQ2K& wb = blocks[b];
    const ActivationBlockQ8K& a = x[b];
    int dot = 0, offset = 0;
    for (int s = 0; s < 16; ++s) {
      const int h = s / 8, j = s / 2 % 4, l0 = 16 * (s % 2);
      int sum = 0;
#pragma GCC unroll 1
      for (int i = 0; i < 16; ++i) {
        sum += static_cast<int16_t>((wb.qs[32 * h + l0 + i] >> (2 * j)) & 3) * int16_t{a.q[16 * s + i]};
      }
      dot += (wb.scales[s] & 15) * sum;
      offset += (wb.scales[s] >> 4) * a.sums[s];
    }
    total += a.d * (fp16_to_float(wb.d) * float(dot) - fp16_to_float(wb.dmin) * float(offset));
  }
  return total;
}

// y[t * ld_y + r] = row r . token t, one row and token at a time.
template <typename Block, float (*RowDot)(const Block*, int64_t, const ActivationBlockQ8K*)>
void dot_rows(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const ActivationBlockQ8K* x,
              int64_t tokens, float* y, int64_t ld_y) {
  const int64_t count = cols / kSuperBlockSize;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      y[t * ld_y + r] = RowDot(reinterpret_cast<const Block*>(w + r * stride), count, x + t * count);
    }
  }
}

}  // namespace

void add_portable_kquant_kernels(MatmulKernels& k) {
  k.quantize_q8k = quantize_activations_q8k;
  k.dot_rows_q8k[static_cast<int>(DType::Q4_K)] = dot_rows<BlockQ4K, row_dot_q4k>;
  k.dot_rows_q8k[static_cast<int>(DType::Q5_K)] = dot_rows<BlockQ5K, row_dot_q5k>;
  k.dot_rows_q8k[static_cast<int>(DType::Q6_K)] = dot_rows<BlockQ6K, row_dot_q6k>;
  k.dot_rows_q8k[static_cast<int>(DType::Q3_K)] = dot_rows<BlockQ3K, row_dot_q3k>;
  k.dot_rows_q8k[static_cast<int>(DType::Q2_K)] = dot_rows<BlockQ2K, row_dot_q2k>;
}

}  // namespace kiln
