// GGUF's K-quant super-blocks, byte for byte as GGUF files store them (llama.cpp's ggml-common
// layouts). Each holds 256 weights (kSuperBlockSize) in sub-blocks with their own scale; d and
// dmin are fp16 bit patterns. Weight i of a super-block is written x[i] below.
#pragma once

#include <cstdint>

namespace kiln {

// Q2_K, 2.625 bits a weight. 16 sub-blocks of 16 weights, each with a 4-bit scale and a 4-bit min:
//   x[i] = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4),  s = i / 16,  q in 0..3.
// Quants: i = 128 h + 32 j + l (h < 2, j < 4, l < 32) is bits 2j..2j+1 of qs[32 h + l].
struct BlockQ2K {
  uint8_t scales[16];
  uint8_t qs[64];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2K) == 84);

// Q3_K, 3.4375 bits a weight. 16 sub-blocks of 16 weights with signed 6-bit scales:
//   x[i] = d * (scale[s] - 32) * (q - (hbit ? 0 : 4)),  s = i / 16,  q in 0..3.
// q: as Q2_K's (i = 128 h + 32 j + l, bits 2j..2j+1 of qs[32 h + l]); hbit: bit i / 32 of hmask[i % 32].
// scale[s]: low 4 bits in scales[s % 8] (low nibble for s < 8, high for s >= 8), high 2 bits in
// bits 2 (s / 4)..2 (s / 4) + 1 of scales[8 + s % 4].
struct BlockQ3K {
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3K) == 110);

// Q4_K, 4.5 bits a weight. 8 sub-blocks of 32 weights with 6-bit scales and mins:
//   x[i] = d * scale[s] * q - dmin * min[s],  s = i / 32,  q in 0..15.
// q: i = 64 c + 32 k + l is the low (k = 0) or high (k = 1) nibble of qs[32 c + l].
// scale/min (unpack_scale_min in kquants.cpp): s < 4 in the low 6 bits of scales[s] and
// scales[s + 4]; s >= 4 in the nibbles of scales[s + 4] and the top 2 bits of scales[s - 4], scales[s].
struct BlockQ4K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ4K) == 144);

// Q5_K, 5.5 bits a weight: Q4_K with a fifth bit a weight, q in 0..31; bit s of qh[i % 32] is
// the high bit of weight i (s = i / 32).
struct BlockQ5K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ5K) == 176);

// Q6_K, 6.5625 bits a weight. 16 sub-blocks of 16 weights with signed 8-bit scales:
//   x[i] = d * scales[s] * (q - 32),  s = i / 16,  q in 0..63.
// i = 128 h + 32 j + l: low 4 bits are the low (j < 2) or high (j >= 2) nibble of
// ql[64 h + 32 (j % 2) + l], high 2 bits are bits 2j..2j+1 of qh[32 h + l].
struct BlockQ6K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6K) == 210);

// IQ4_XS, 4.25 bits a weight (not a K-quant by name, but the same 256-weight super-block). 8
// sub-blocks of 32 weights with signed 6-bit scales, weights on IQ4_NL's non-linear grid
// (kIq4nlValues, quant/block32_formats.h):
//   x[i] = d * (ls[s] - 32) * kIq4nlValues[q],  s = i / 32,  q in 0..15.
// q: sub-block s's 16 bytes qs[16 s .. 16 s + 15] in IQ4_NL's (and Q4_0's) order, byte j holding
// weight 32 s + j (low nibble) and 32 s + j + 16 (high nibble). ls[s]: low 4 bits the nibble s % 2
// of scales_l[s / 2] (low nibble for even s), high 2 bits bits 2s..2s+1 of the little-endian scales_h.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[4];
  uint8_t qs[128];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

}  // namespace kiln
