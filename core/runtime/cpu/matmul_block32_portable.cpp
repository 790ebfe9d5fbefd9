// Portable kernels for GGUF's other 32-weight formats held as stored (Q5_0, Q4_1, Q5_1, IQ4_NL;
// quant/block32_formats.h): Gemma 3 1B and 270M "K-quant" files hold mostly Q5_0 (Q5_K_M: Q5_1,
// IQ4_XS: IQ4_NL), since their rows (1152, 640 weights) are not whole K-quant super-blocks. Against
// activations rounded to int8 per 32 weights (quantize_activations_q8_0, shared with Q4_0), each
// block's dot product is an exact integer,
//   sum_j w_j x_j ~ dx * (d * sum_j value(q_j) qx_j + m * sum_j qx_j),
// written as plainly as the block layouts: the reference the SIMD sets are tested against. The float
// kernels (dot_rows, to_float) are the reference of the Vulkan fp32 kernels.
#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "runtime/cpu/matmul_kernels.h"

namespace kiln {
namespace {

// A block's quant j (the nibble, plus the fifth bit where there is one) and its weight as
// d * value(q) + m: value and m per format.
inline int nibble(const uint8_t* qs, int j) { return j < kBlockSize / 2 ? (qs[j] & 0x0F) : (qs[j - kBlockSize / 2] >> 4); }
inline int fifth_bit(const uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

inline int value(const BlockQ5_0& b, int j) { return (nibble(b.qs, j) | fifth_bit(b.qh, j) << 4) - 16; }
inline int value(const BlockQ4_1& b, int j) { return nibble(b.qs, j); }
inline int value(const BlockQ5_1& b, int j) { return nibble(b.qs, j) | fifth_bit(b.qh, j) << 4; }
inline int value(const BlockIQ4_NL& b, int j) { return kIq4nlValues[nibble(b.qs, j)]; }
template <typename Block>
float min_of(const Block& b) {
  if constexpr (requires { b.m; }) return fp16_to_float(b.m);
  else return 0.0f;
}

// sum_j w_j x_j ~ dx * (d * sum_j value_j qx_j + m * sum_j qx_j), the sums exact integers.
template <typename Block>
void dot_rows_i8(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const ActivationBlockQ8_0* x,
                 int64_t tokens, float* y, int64_t ld_y) {
  const int64_t blocks = cols / kBlockSize;
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = reinterpret_cast<const Block*>(w + r * stride);
    for (int64_t t = 0; t < tokens; ++t) {
      const ActivationBlockQ8_0* a = x + t * blocks;
      float total = 0.0f, mins = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        int dot = 0, sum = 0;  // |dot| <= 32 * 127 * 127
        for (int j = 0; j < kBlockSize; ++j) {
          dot += value(row[b], j) * a[b].q[j];
          sum += a[b].q[j];
        }
        total += fp16_to_float(row[b].d) * a[b].d * static_cast<float>(dot);
        const float m = min_of(row[b]);
        if (m != 0.0f) mins += m * a[b].d * static_cast<float>(sum);
      }
      y[t * ld_y + r] = total + mins;
    }
  }
}

template <DType T>
void to_float(const uint8_t* src, int64_t n, float* dst) {
  dequantize_row_block32(T, src, n, dst);
}

// Float activations: each block expanded to floats, then a plain dot.
template <DType T>
void dot_rows_float(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x, float* y) {
  const size_t block_bytes = block32_format_bytes(T);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * stride;
    float s = 0.0f;
    for (int64_t b = 0; b < cols / kBlockSize; ++b) {
      float v[kBlockSize];
      dequantize_row_block32(T, row + b * block_bytes, kBlockSize, v);
      float block = 0.0f;
      for (int j = 0; j < kBlockSize; ++j) block += v[j] * x[b * kBlockSize + j];
      s += block;
    }
    y[r] = s;
  }
}

template <DType T, typename Block>
void add(MatmulKernels& k) {
  constexpr int i = static_cast<int>(T);
  k.dot_rows[i] = dot_rows_float<T>;
  k.to_float[i] = to_float<T>;
  k.dot_rows_i8[i] = dot_rows_i8<Block>;
}

}  // namespace

void add_portable_block32_kernels(MatmulKernels& k) {
  add<DType::Q5_0, BlockQ5_0>(k);
  add<DType::Q4_1, BlockQ4_1>(k);
  add<DType::Q5_1, BlockQ5_1>(k);
  add<DType::IQ4_NL, BlockIQ4_NL>(k);
  if (!k.quantize_q8_0) k.quantize_q8_0 = quantize_activations_q8_0;
}

}  // namespace kiln
