// GGUF K-quant formats (Q2_K ... Q6_K, quant/kquant_blocks.h): dequantization only. Bytes per
// 256-weight super-block: Q2_K 84, Q3_K 110, Q4_K 144, Q5_K 176, Q6_K 210. dequantize_row() in
// convert.h forwards these types here.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "quant/dtype.h"

namespace kiln {

bool is_kquant(DType t);
size_t kquant_block_bytes(DType t);                                   // bytes per super-block
void dequantize_row_kquant(DType t, const void* src, int64_t n, float* dst);  // n % 256 == 0

// Sub-block scales unpacked from a super-block's packed scale bytes, for the matmul kernels (which
// call them once per super-block, so they work on 32-bit words: four sub-blocks at a time).
static_assert(std::endian::native == std::endian::little, "the scale unpacking reads little-endian words");

// Q4_K / Q5_K (12 bytes): eight 6-bit scales and mins. Sub-blocks 0-3 keep theirs in the low 6 bits of
// bytes 0-3 (scales) and 4-7 (mins); 4-7 keep the low 4 bits in the nibbles of bytes 8-11 and the
// top 2 bits in the top bits of bytes 0-3 (scales) and 4-7 (mins).
inline void unpack_q4k_scales(const uint8_t* packed, uint8_t scales[8], uint8_t mins[8]) {
  uint32_t w[3];
  std::memcpy(w, packed, 12);
  const uint32_t low6 = 0x3f3f3f3f, nibble = 0x0f0f0f0f, top2 = 0x30303030;
  const uint32_t out[4] = {w[0] & low6, (w[2] & nibble) | ((w[0] >> 2) & top2),  // scales 0-3, 4-7
                           w[1] & low6, ((w[2] >> 4) & nibble) | ((w[1] >> 2) & top2)};  // mins
  std::memcpy(scales, out, 8);
  std::memcpy(mins, out + 2, 8);
}

// Q3_K (12 bytes): sixteen 6-bit scales stored plus 32, returned signed (-32 .. 31). Low 4 bits: the
// low nibbles of bytes 0-7 (sub-blocks 0-7), then their high nibbles (8-15); top 2 bits: bits
// 2 (s / 4) .. 2 (s / 4) + 1 of byte 8 + s % 4.
inline void unpack_q3k_scales(const uint8_t* packed, int8_t scales[16]) {
  uint32_t w[3];
  std::memcpy(w, packed, 12);
  const uint32_t nibble = 0x0f0f0f0f, top2 = 0x30303030;
  uint32_t out[4] = {(w[0] & nibble) | ((w[2] << 4) & top2), (w[1] & nibble) | ((w[2] << 2) & top2),
                     ((w[0] >> 4) & nibble) | (w[2] & top2), ((w[1] >> 4) & nibble) | ((w[2] >> 2) & top2)};
  uint8_t bytes[16];
  std::memcpy(bytes, out, 16);
  for (int s = 0; s < 16; ++s) scales[s] = static_cast<int8_t>(bytes[s] - 32);
}

}  // namespace kiln
