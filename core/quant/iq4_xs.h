// GGUF's IQ4_XS (layout: BlockIQ4_XS in quant/kquant_blocks.h): 256-weight super-blocks of eight
// 32-weight sub-blocks, each IQ4_NL's grid times its own signed 6-bit scale. Kiln reads and runs it
// as stored (runtime/cpu/matmul_iq4xs_*, kernels/vulkan/weights_kquant.glsl); it does not write it.
#pragma once

#include <cstdint>

#include "quant/kquant_blocks.h"

namespace kiln {

// Sub-block s's scale less 32 (-32 .. 31): the weights of the sub-block are d * this * grid value.
inline int iq4xs_scale(const BlockIQ4_XS& b, int s) {
  const int low = (b.scales_l[s / 2] >> (4 * (s % 2))) & 15;
  const int high = (b.scales_h >> (2 * s)) & 3;
  return (low | (high << 4)) - 32;
}

// n % 256 == 0; src need not be aligned.
void dequantize_row_iq4_xs(const void* src, int64_t n, float* dst);

}  // namespace kiln
