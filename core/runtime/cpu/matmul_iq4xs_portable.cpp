// Portable kernels for IQ4_XS held as stored (quant/iq4_xs.h). Against activations rounded to int8
// per 32 weights (quantize_activations_q8_0, as IQ4_NL's), each sub-block's dot product is an exact
// integer,
//   sum_j w_j x_j ~ dx * d * (ls - 32) * sum_j grid(q_j) qx_j,
// written as plainly as the block layout: the reference the SIMD sets are tested against. The float
// kernels (dot_rows, to_float) are the reference of the Vulkan fp32 kernels.
#include <cstring>

#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "quant/iq4_xs.h"
#include "runtime/cpu/matmul_kernels.h"

namespace kiln {
namespace {

constexpr int kSubBlocks = kSuperBlockSize / kBlockSize;  // 8

BlockIQ4_XS block_at(const uint8_t* row, int64_t k) {
  BlockIQ4_XS b;
  std::memcpy(&b, row + k * sizeof b, sizeof b);
  return b;
}

// Weight j (< 32) of sub-block s as its grid value.
int grid_value(const BlockIQ4_XS& b, int s, int j) {
  const uint8_t byte = b.qs[16 * s + j % 16];
  return kIq4nlValues[j < 16 ? byte & 15 : byte >> 4];
}

void dot_rows_i8(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const ActivationBlockQ8_0* x,
                 int64_t tokens, float* y, int64_t ld_y) {
  const int64_t blocks = cols / kBlockSize;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * stride;
    for (int64_t t = 0; t < tokens; ++t) {
      const ActivationBlockQ8_0* a = x + t * blocks;
      float total = 0.0f;
      for (int64_t k = 0; k < cols / kSuperBlockSize; ++k) {
        const BlockIQ4_XS b = block_at(row, k);
        const float d = fp16_to_float(b.d);
        for (int s = 0; s < kSubBlocks; ++s) {
          const ActivationBlockQ8_0& as = a[k * kSubBlocks + s];
          int dot = 0;  // |dot| <= 32 * 127 * 127
          for (int j = 0; j < kBlockSize; ++j) dot += grid_value(b, s, j) * as.q[j];
          total += d * float(iq4xs_scale(b, s)) * as.d * float(dot);
        }
      }
      y[t * ld_y + r] = total;
    }
  }
}

void to_float(const uint8_t* src, int64_t n, float* dst) { dequantize_row_iq4_xs(src, n, dst); }

// Float activations: each super-block expanded to floats, then a plain dot.
void dot_rows_float(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0.0f;
    for (int64_t k = 0; k < cols / kSuperBlockSize; ++k) {
      float v[kSuperBlockSize];
      dequantize_row_iq4_xs(w + r * stride + k * sizeof(BlockIQ4_XS), kSuperBlockSize, v);
      float block = 0.0f;
      for (int j = 0; j < kSuperBlockSize; ++j) block += v[j] * x[k * kSuperBlockSize + j];
      s += block;
    }
    y[r] = s;
  }
}

}  // namespace

void add_portable_iq4xs_kernels(MatmulKernels& k) {
  constexpr int i = static_cast<int>(DType::IQ4_XS);
  k.dot_rows[i] = dot_rows_float;
  k.to_float[i] = to_float;
  k.dot_rows_i8[i] = dot_rows_i8;
  if (!k.quantize_q8_0) k.quantize_q8_0 = quantize_activations_q8_0;
}

}  // namespace kiln
