// GGUF's K-quants (quant/kquant_blocks.h) as the GPU holds them: at close to the file's size, in
// the 32-weight blocks every matrix kernel iterates over (weight_layout.h), so each kernel keeps its
// structure. A 256-weight super-block is 8 blocks; block gb of a chunk belongs to super-block gb / 8
// (rows are whole super-blocks). Every block's 32 quants q[0..31] (q in 0..63) are repacked so
// that their low 4 bits are a uvec4 in Q4_0's nibble order (byte j: q[j] low, q[j + 16] high),
// which kernels/vulkan/weights.glsl unpacks as it does Q4_0's (Q2_K, Q3_K: their low 2 bits as two
// words, q[j] at bits 2 (j % 16) of word j / 16); the rest of each super-block (scales, mins, high
// bits) goes to the scales binding, read as uint words:
//   Q4_K:  4 words: half2(d, dmin), then GGUF's 12 packed 6-bit scale/min bytes   144 B (file 144)
//   Q5_K: 12 words: Q4_K's 4, then a word a block: bit j = bit 4 of q[j]          176 B (file 176)
//   Q6_K: 21 words: two a block (bits 4-5 of q[j] at bits 2 (j % 16) of word j / 16),
//         4 words of GGUF's 16 int8 scales (block b: sub-blocks 2b, 2b + 1), d      212 B (file 210)
//   Q3_K: 12 words: a word a block (bit j = bit 2 of q[j]), GGUF's 12 packed scale bytes, d  112 B (file 110)
//   Q2_K:  5 words: GGUF's 16 scale/min bytes (block b: sub-blocks 2b, 2b + 1), half2(d, dmin)  84 B (file 84)
//   IQ4_XS: 2 words: half2(d, scales_h), scales_l (its nibbles are in Q4_0's order already)    136 B (file 136)
// so a block's weights are x = (q - bias) * scale + offset with, per half block of 16:
//   Q4_K, Q5_K: scale = d * sc[b], offset = -dmin * m[b];   Q6_K: scale = d * sc[2b + half], bias 32;
//   Q3_K: scale = d * (sc[2b + half] - 32), bias 4;         Q2_K: d * (sc & 15), offset = -dmin * (sc >> 4);
//   IQ4_XS: q is IQ4_NL's grid value, scale = d * (ls[b] - 32) (quant/iq4_xs.h).
#pragma once

#include <cstdint>

#include "quant/dtype.h"

namespace kiln::vk {

bool gpu_kquant(DType type);      // a K-quant (all five) or IQ4_XS: a super-block format with GPU kernels
bool two_bit_kquant(DType type);  // Q2_K, Q3_K: 8 bytes a block in the weights binding, not 16
// Bytes of one row's scales-binding words: cols / 256 super-blocks of the words above.
uint64_t kquant_scale_row_bytes(DType type, int64_t cols);
// One GGUF row of `cols` weights into its blocks' nibbles (cols / 2 bytes; cols / 4 for Q2_K, Q3_K)
// and its scale words.
void repack_kquant_row(DType type, int64_t cols, const uint8_t* src, uint8_t* weights, uint8_t* scales);

}  // namespace kiln::vk
