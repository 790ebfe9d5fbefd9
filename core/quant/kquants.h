// GGUF K-quant formats (Q2_K ... Q6_K, quant/kquant_blocks.h): dequantization only. Bytes per
// 256-weight super-block: Q2_K 84, Q3_K 110, Q4_K 144, Q5_K 176, Q6_K 210. dequantize_row() in
// convert.h forwards these types here.
#pragma once

#include <cstdint>

#include "quant/dtype.h"

namespace kiln {

bool is_kquant(DType t);
size_t kquant_block_bytes(DType t);                                   // bytes per super-block
void dequantize_row_kquant(DType t, const void* src, int64_t n, float* dst);  // n % 256 == 0

}  // namespace kiln
