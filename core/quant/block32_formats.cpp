// Dequantization of Q4_1, Q5_0, Q5_1 and IQ4_NL (layouts in quant/block32_formats.h).
#include "quant/block32_formats.h"

#include <cmath>
#include <string>

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

void quantize_row_block32(DType t, const float* src, int64_t n, void* dst) {
  if (t != DType::Q5_0) throw Error(std::string("quantize_row: Kiln does not write ") + to_string(t));
  auto* blocks = static_cast<BlockQ5_0*>(dst);
  for (int64_t b = 0; b < n / kBlockSize; ++b) {
    const float* x = src + b * kBlockSize;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kBlockSize; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    auto level = [id](float v) -> int {
      const float shifted = v * id + 16.5f;  // in [0.5, 32.5] for finite input
      if (!(shifted >= 0.0f)) return 0;      // nan
      return shifted >= 31.0f ? 31 : static_cast<int>(shifted);  // truncation
    };
    BlockQ5_0& out = blocks[b];
    out.d = float_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kBlockSize / 2; ++j) {
      const int lo = level(x[j]), hi = level(x[j + kBlockSize / 2]);
      out.qs[j] = static_cast<uint8_t>((lo & 15) | (hi & 15) << 4);
      qh |= uint32_t(lo >> 4) << j | uint32_t(hi >> 4) << (j + kBlockSize / 2);
    }
    for (int i = 0; i < 4; ++i) out.qh[i] = static_cast<uint8_t>(qh >> (8 * i));
  }
}

}  // namespace kiln
