// Portable matmul kernels: plain loops with eight independent float lanes, which GCC and Clang
// vectorize at -O3 for whatever SIMD the target has (and which stay correct where they do not).
#include <bit>

#include "quant/convert.h"
#include "runtime/cpu/matmul_kernels.h"

namespace kiln {

namespace {

constexpr int kLanes = 8;

float sum_lanes(const float (&acc)[kLanes]) {
  float s = 0.0f;
  for (float v : acc) s += v;
  return s;
}

template <DType T>
void to_float(const uint8_t* src, int64_t n, float* dst) {
  dequantize_row(T, src, n, dst);
}

// fp16 -> float in a form the loops below vectorize: shifted into float position, the bits read
// as a float 2^112 too small (subnormals included, exactly). Inf and nan come out at 2^16 and
// above, where setting every exponent bit restores them with their payload.
inline float half_to_float(uint16_t h) {
  const float magnitude = std::bit_cast<float>(static_cast<uint32_t>(h & 0x7fff) << 13) * 0x1p112f;
  const uint32_t special = magnitude >= 65536.0f ? 0x7f800000u : 0u;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | special |
                              (static_cast<uint32_t>(h & 0x8000) << 16));
}

// Weight i of a row in a float format.
template <DType T>
float weight(const uint8_t* row, int64_t i) {
  if constexpr (T == DType::F32) {
    return reinterpret_cast<const float*>(row)[i];
  } else if constexpr (T == DType::F16) {
    return half_to_float(reinterpret_cast<const uint16_t*>(row)[i]);
  } else {
    return std::bit_cast<float>(static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(row)[i]) << 16);
  }
}

template <DType T>
void dot_rows_float(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * stride;
    float acc[kLanes] = {};
    int64_t c = 0;
    for (; c + kLanes <= cols; c += kLanes) {
      for (int l = 0; l < kLanes; ++l) acc[l] += weight<T>(row, c + l) * x[c + l];
    }
    float s = sum_lanes(acc);
    for (; c < cols; ++c) s += weight<T>(row, c) * x[c];
    y[r] = s;
  }
}

// One block's q[j] * x[j] summed (scale applied by the caller); q already as floats.
float block_dot(const float (&q)[kBlockSize], const float* x) {
  float acc[kLanes] = {};
  for (int j = 0; j < kBlockSize; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += q[j + l] * x[j + l];
  }
  return sum_lanes(acc);
}

void dot_rows_q8_0(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const auto* blocks = reinterpret_cast<const BlockQ8_0*>(w + r * stride);
    float s = 0.0f;
    for (int64_t b = 0; b < cols / kBlockSize; ++b) {
      float q[kBlockSize];
      for (int j = 0; j < kBlockSize; ++j) q[j] = static_cast<float>(blocks[b].qs[j]);
      s += half_to_float(blocks[b].d) * block_dot(q, x + b * kBlockSize);
    }
    y[r] = s;
  }
}

void dot_rows_q4_0(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x, float* y) {
  constexpr int kHalf = kBlockSize / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const auto* blocks = reinterpret_cast<const BlockQ4_0*>(w + r * stride);
    float s = 0.0f;
    for (int64_t b = 0; b < cols / kBlockSize; ++b) {
      float q[kBlockSize];
      for (int j = 0; j < kHalf; ++j) {
        q[j] = static_cast<float>((blocks[b].qs[j] & 0x0f) - 8);
        q[j + kHalf] = static_cast<float>((blocks[b].qs[j] >> 4) - 8);
      }
      s += half_to_float(blocks[b].d) * block_dot(q, x + b * kBlockSize);
    }
    y[r] = s;
  }
}

void tile_product(const float* w, int64_t ld_w, const float* xt, int64_t ld_xt, int64_t tokens, int64_t k,
                  float* acc, int64_t ld_acc) {
  constexpr int kRows = MatmulKernels::kTileRows;
  for (int64_t t0 = 0; t0 < tokens; t0 += kLanes) {
    float sums[kRows][kLanes] = {};
    for (int64_t c = 0; c < k; ++c) {
      const float* x = xt + c * ld_xt + t0;
      for (int r = 0; r < kRows; ++r) {
        const float wrc = w[r * ld_w + c];
        for (int l = 0; l < kLanes; ++l) sums[r][l] += wrc * x[l];
      }
    }
    for (int r = 0; r < kRows; ++r)
      for (int l = 0; l < kLanes; ++l) acc[r * ld_acc + t0 + l] += sums[r][l];
  }
}

}  // namespace

MatmulKernels portable_matmul_kernels() {
  MatmulKernels k;
  k.name = "portable";
  k.ops = portable_op_kernels();
  k.dot_rows[static_cast<int>(DType::F32)] = dot_rows_float<DType::F32>;
  k.dot_rows[static_cast<int>(DType::F16)] = dot_rows_float<DType::F16>;
  k.dot_rows[static_cast<int>(DType::BF16)] = dot_rows_float<DType::BF16>;
  k.dot_rows[static_cast<int>(DType::Q8_0)] = dot_rows_q8_0;
  k.dot_rows[static_cast<int>(DType::Q4_0)] = dot_rows_q4_0;
  k.to_float[static_cast<int>(DType::F32)] = to_float<DType::F32>;
  k.to_float[static_cast<int>(DType::F16)] = to_float<DType::F16>;
  k.to_float[static_cast<int>(DType::BF16)] = to_float<DType::BF16>;
  k.to_float[static_cast<int>(DType::Q8_0)] = to_float<DType::Q8_0>;
  k.to_float[static_cast<int>(DType::Q4_0)] = to_float<DType::Q4_0>;
  k.tile_product = tile_product;
  add_portable_kquant_kernels(k);
  add_portable_q8_0_kernels(k);
  add_portable_block32_kernels(k);
  add_portable_iq4xs_kernels(k);
  return k;
}

}  // namespace kiln
