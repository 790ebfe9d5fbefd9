// Portable Q8_0 / Q4_0 kernels against activations rounded to int16 (Q8_0) or int8 (Q4_0) per 32
// weights, and that rounding, which every set shares. Each block's dot product is an exact integer,
//   sum_j w_j x_j ~ dw * dx * sum_j qw_j qx_j,
// so only one float multiply-add per block and token remains: far less work than float products.
// Written as plainly as the block layouts (quant/dtype.h): the reference the SIMD sets are tested against.
#include <algorithm>
#include <cmath>
#include <limits>

#include "quant/convert.h"
#include "runtime/cpu/matmul_kernels.h"

namespace kiln {

void quantize_activations_q8_0(const float* x, int64_t cols, ActivationBlockQ8_0* out) {
  for (int64_t b = 0; b < cols / kBlockSize; ++b, x += kBlockSize) {
    ActivationBlockQ8_0& a = out[b];
    float amax = 0.0f;
    bool finite = true;
    for (int i = 0; i < kBlockSize; ++i) {
      amax = std::max(amax, std::fabs(x[i]));
      finite = finite && std::isfinite(x[i]);
    }
    const float d = amax / 127.0f;
    const float inverse = d > 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int i = 0; i < kBlockSize; ++i) {
      const float q = finite ? std::nearbyint(x[i] * inverse) : 0.0f;
      a.q[i] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
      sum += a.q[i];
    }
    // A block holding inf or nan keeps no numbers: nan scales make every dot with it nan.
    a.d = finite ? d : std::numeric_limits<float>::quiet_NaN();
    a.offset = -8 * sum;
  }
}

void quantize_activations_q16(const float* x, int64_t cols, ActivationBlockQ16* out) {
  for (int64_t b = 0; b < cols / kBlockSize; ++b, x += kBlockSize) {
    ActivationBlockQ16& a = out[b];
    float amax = 0.0f;
    bool finite = true;
    for (int i = 0; i < kBlockSize; ++i) {
      amax = std::max(amax, std::fabs(x[i]));
      finite = finite && std::isfinite(x[i]);
    }
    const float d = amax / 32767.0f;
    const float inverse = d > 0.0f ? 1.0f / d : 0.0f;
    a.d = finite ? d : std::numeric_limits<float>::quiet_NaN();
    for (int i = 0; i < kBlockSize; ++i) {
      const float q = finite ? std::nearbyint(x[i] * inverse) : 0.0f;
      a.q[i] = static_cast<int16_t>(std::clamp(q, -32767.0f, 32767.0f));
    }
  }
}

namespace {

// Weight j of a block as the signed integer it stands for.
inline int weight(const BlockQ8_0& b, int j) { return b.qs[j]; }
inline int weight(const BlockQ4_0& b, int j) {
  return j < kBlockSize / 2 ? (b.qs[j] & 0x0F) - 8 : (b.qs[j - kBlockSize / 2] >> 4) - 8;
}

template <typename Block, typename Activation>
void dot_rows(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const Activation* x,
              int64_t tokens, float* y, int64_t ld_y) {
  const int64_t blocks = cols / kBlockSize;
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = reinterpret_cast<const Block*>(w + r * stride);
    for (int64_t t = 0; t < tokens; ++t) {
      const Activation* a = x + t * blocks;
      float total = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        int dot = 0;  // int16 activations: |dot| <= 32 * 128 * 32767 < 2^31
        for (int j = 0; j < kBlockSize; ++j) dot += weight(row[b], j) * a[b].q[j];
        total += fp16_to_float(row[b].d) * a[b].d * static_cast<float>(dot);
      }
      y[t * ld_y + r] = total;
    }
  }
}

}  // namespace

void add_portable_q8_0_kernels(MatmulKernels& k) {
  k.quantize_q16 = quantize_activations_q16;
  k.dot_rows_q8_0 = dot_rows<BlockQ8_0, ActivationBlockQ16>;
  k.quantize_q8_0 = quantize_activations_q8_0;
  k.dot_rows_q4_0 = dot_rows<BlockQ4_0, ActivationBlockQ8_0>;
}

}  // namespace kiln
