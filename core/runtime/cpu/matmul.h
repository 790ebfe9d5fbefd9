// Matrix products with a weight in any storage format; activations stay float32
// and accumulation is float32.
#pragma once

#include <cstdint>

#include "quant/matrix.h"
#include "runtime/cpu/thread_pool.h"

namespace kiln {

// y[t][r] = sum_c w[r][c] * x[t][c] for t < n tokens.
// x: [n][w.cols] row-major, y: [n][w.rows] row-major.
void matmul(const Matrix& w, const float* x, int64_t n, float* y, ThreadPool& pool);

// The same with Q8_0 / Q4_0 multiplying the activations as floats, not rounded to integers (nor
// BF16's to bf16): the reference for the Vulkan fp32 kernels, whose tests allow only float rounding
// between the two.
void matmul_float_activations(const Matrix& w, const float* x, int64_t n, float* y, ThreadPool& pool);

// One row of w as floats (embedding lookup).
void matrix_row(const Matrix& w, int64_t r, float* out);

}  // namespace kiln
