// GGUF's other 32-weight block formats, byte for byte as files store them. Kiln runs them as stored,
// with kernels on both backends (runtime/cpu/matmul_block32_*, kernels/vulkan/weights_kquant.glsl).
// llama-quantize writes them where a K-quant does not fit a row: a Gemma 3 1B or 270M
// "Q4_K_M" file (hidden size 1152 or 640, not a multiple of 256) holds Q5_0 for most matrices,
// Q5_K_M files Q5_1, IQ4_XS files IQ4_NL; some Q4_0 files hold Q4_1. d and m are fp16 bit patterns.
// Every format keeps Q4_0's nibble order: byte j holds weight j (low nibble) and weight j + 16 (high).
#pragma once

#include <cstdint>

#include "quant/dtype.h"

namespace kiln {

// Q4_1, 5 bits a weight: x[i] = d * q[i] + m, q in 0..15.
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[kBlockSize / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0, 5.5 bits a weight: x[i] = d * (q[i] - 16), q in 0..31; the nibble gives the low 4 bits and
// bit i of the little-endian 32-bit qh the fifth.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kBlockSize / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q5_1, 6 bits a weight: x[i] = d * q[i] + m, q in 0..31 as Q5_0's.
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kBlockSize / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// IQ4_NL, 4.5 bits a weight: x[i] = d * kIq4nlValues[q[i]], a non-linear 4-bit grid denser near 0.
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kBlockSize / 2];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// The IQ4_NL grid, the format's definition (the same 16 values in every file).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

bool is_block32_format(DType t);       // Q4_1, Q5_0, Q5_1, IQ4_NL
size_t block32_format_bytes(DType t);  // bytes per 32-weight block
void dequantize_row_block32(DType t, const void* src, int64_t n, float* dst);  // n % 32 == 0
// Q5_0 as llama-quantize writes it without an importance matrix: per block, the value of largest
// magnitude (the first, with its sign) maps to q = 0, so d = max / -16 and q = min(31, trunc(x / d
// + 16.5)). Only Q5_0 is written (kiln quantize's fallback for Q4_K, as llama.cpp's).
void quantize_row_block32(DType t, const float* src, int64_t n, void* dst);  // n % 32 == 0

}  // namespace kiln
