// Conversions between float and every storage format, one row at a time.
#pragma once

#include <cstdint>

#include "quant/dtype.h"
#include "quant/matrix.h"

namespace kiln {

float fp16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);   // round to nearest even
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);   // round to nearest even

// dst holds row_bytes(type, n); n % kBlockSize == 0 for block formats.
void quantize_row(DType type, const float* src, int64_t n, void* dst);
void dequantize_row(DType type, const void* src, int64_t n, float* dst);

// The format a weight of `cols` columns gets when `wanted` was asked for: block formats fall back
// to F16 when the row is not a whole number of blocks.
DType storage_type_for(DType wanted, int64_t cols);

}  // namespace kiln
