// Storage formats of weights. Q8_0 and Q4_0 use exactly GGUF's block layouts
// (32 weights a block, an fp16 scale first), so GGUF tensors load into the same kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

// Q2_K ... Q6_K are GGUF's K-quants (256-weight super-blocks, quant/kquants.h). Q4_1, Q5_0, Q5_1 and
// IQ4_NL are GGUF's other 32-weight formats (quant/block32_formats.h), IQ4_XS its 256-weight
// super-blocks on IQ4_NL's grid (quant/iq4_xs.h): read and run as stored.
enum class DType : uint8_t { F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS };

constexpr int kSuperBlockSize = 256;  // weights per K-quant super-block

constexpr int kBlockSize = 32;  // weights per Q8_0 / Q4_0 block

// Q8_0: x[i] = d * qs[i]. d = max|x| / 127.
struct BlockQ8_0 {
  uint16_t d;          // fp16 scale
  int8_t qs[kBlockSize];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_0: x[i] = d * (q[i] - 8), q in 0..15. Byte j holds q[j] in its low nibble and
// q[j + 16] in its high nibble. d = (the value of largest magnitude, signed) / -8.
struct BlockQ4_0 {
  uint16_t d;          // fp16 scale
  uint8_t qs[kBlockSize / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

const char* to_string(DType t);
bool is_block_quantized(DType t);
// Weights a row must be a whole number of: 1 (F32, F16, BF16), 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// IQ4_NL) or 256 (the K-quants, IQ4_XS).
int64_t block_weights(DType t);
// Bytes of one row of `cols` weights. Block formats need cols % kBlockSize == 0.
size_t row_bytes(DType t, int64_t cols);

}  // namespace kiln
