// Quantization of float rows into GGUF's K-quants Q4_K, Q5_K and Q6_K, byte for byte in the
// layouts of quant/kquant_blocks.h, so the blocks load in llama.cpp as in Kiln.
//
// Each sub-block's scale (and, for Q4_K / Q5_K, its min) is searched to minimise the squared error
// of the sub-block, not just taken from its range; then the super-block's fp16 d / dmin and the
// 6- or 8-bit sub-block scales are fixed and every weight is rounded against the scale it will
// really be multiplied by. quantize_row() in convert.h forwards these types here.
#pragma once

#include <cstdint>

#include "quant/dtype.h"

namespace kiln {

// True for the K-quants quantize_row_kquant writes (Q4_K, Q5_K, Q6_K).
bool can_quantize_kquant(DType t);

// dst holds n / 256 super-blocks of `t`; n % 256 == 0. Throws kiln::Error for other types.
void quantize_row_kquant(DType t, const float* src, int64_t n, void* dst);

}  // namespace kiln
