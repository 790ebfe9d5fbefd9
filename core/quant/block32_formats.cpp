// Dequantization of Q4_1, Q5_0, Q5_1 and IQ4_NL (layouts in quant/block32_formats.h).
#include "quant/block32_formats.h"

#include "kiln/types.h"
#include "quant/convert.h"

namespace kiln {
namespace {

// Weight j (j < 32) of a block as its unsigned code: the nibble, plus the fifth bit where there is one.
int nibble(const uint8_t* qs, int j) { return j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4); }
int fifth_bit(const uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

template <typename Block, typename Value>
void dequantize_blocks(const void* src, int64_t n, float* dst, Value value) {
  const auto* blocks = static_cast<const Block*>(src);
  for (int64_t b = 0; b < n / kBlockSize; ++b)
    for (int j = 0; j < kBlockSize; ++j) dst[b * kBlockSize + j] = value(blocks[b], j);
}

}  // namespace

bool is_block32_format(DType t) {
  return t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::IQ4_NL;
}

size_t block32_format_bytes(DType t) {
  switch (t) {
    case DType::Q4_1: return sizeof(BlockQ4_1);
    case DType::Q5_0: return sizeof(BlockQ5_0);
    case DType::Q5_1: return sizeof(BlockQ5_1);
    case DType::IQ4_NL: return sizeof(BlockIQ4_NL);
    default: throw Error(std::string(to_string(t)) + " is not a 32-weight GGUF block format");
  }
}

void dequantize_row_block32(DType t, const void* src, int64_t n, float* dst) {
  switch (t) {
    case DType::Q4_1:
      return dequantize_blocks<BlockQ4_1>(src, n, dst, [](const BlockQ4_1& k, int j) {
        return fp16_to_float(k.d) * float(nibble(k.qs, j)) + fp16_to_float(k.m);
      });
    case DType::Q5_0:
      return dequantize_blocks<BlockQ5_0>(src, n, dst, [](const BlockQ5_0& k, int j) {
        return fp16_to_float(k.d) * float((nibble(k.qs, j) | fifth_bit(k.qh, j) << 4) - 16);
      });
    case DType::Q5_1:
      return dequantize_blocks<BlockQ5_1>(src, n, dst, [](const BlockQ5_1& k, int j) {
        return fp16_to_float(k.d) * float(nibble(k.qs, j) | fifth_bit(k.qh, j) << 4) + fp16_to_float(k.m);
      });
    case DType::IQ4_NL:
      return dequantize_blocks<BlockIQ4_NL>(src, n, dst, [](const BlockIQ4_NL& k, int j) {
        return fp16_to_float(k.d) * float(kIq4nlValues[nibble(k.qs, j)]);
      });
    default: throw Error(std::string(to_string(t)) + " is not a 32-weight GGUF block format");
  }
}

}  // namespace kiln
