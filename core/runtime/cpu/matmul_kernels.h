// The inner loops of matmul for one instruction set. matmul.cpp owns threading and tiling and picks
// a kernel set at run time, so one binary runs on any x86-64 (or other) CPU and uses AVX2 where the
// CPU has it. Tests run every set the CPU supports against the same reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/matrix.h"
#include "runtime/cpu/thread_pool.h"

namespace kiln {

// The weight formats matmul computes with directly (DType values F32 .. Q4_0, in enum order).
constexpr int kMatmulTypeCount = 5;
inline bool is_matmul_type(DType t) { return static_cast<int>(t) < kMatmulTypeCount; }

struct MatmulKernels {
  const char* name = "";
  // y[i] = dot(row i, x) for i < rows. Row i starts at w + i * stride bytes and holds `cols` weights
  // (a multiple of 32 for block formats); x: [cols].
  using DotRows = void (*)(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x,
                           float* y);
  // dst[0..n) = the first n weights at src as floats (n a multiple of 32 for block formats).
  using ToFloat = void (*)(const uint8_t* src, int64_t n, float* dst);
  // Prefill's inner loop, vectorized over tokens so that no horizontal sums are needed:
  //   acc[r * ld_acc + t] += sum_{c < k} w[r * ld_w + c] * xt[c * ld_xt + t]
  // for r < kTileRows and t < tokens (a multiple of 8). w: [kTileRows][k] weights as floats,
  // xt: [k][tokens] activations transposed, acc: [kTileRows][tokens].
  static constexpr int kTileRows = 6;
  using TileProduct = void (*)(const float* w, int64_t ld_w, const float* xt, int64_t ld_xt, int64_t tokens,
                               int64_t k, float* acc, int64_t ld_acc);

  DotRows dot_rows[kMatmulTypeCount] = {};   // indexed by DType
  ToFloat to_float[kMatmulTypeCount] = {};
  TileProduct tile_product = nullptr;
};

// Plain C++ that compiles and is correct everywhere.
MatmulKernels portable_matmul_kernels();

// True on x86-64 CPUs with AVX2, FMA and F16C (checked at run time).
bool cpu_has_avx2_kernels();
// The AVX2/FMA/F16C set; only call when cpu_has_avx2_kernels().
MatmulKernels avx2_matmul_kernels();

// The fastest set this CPU runs.
MatmulKernels best_matmul_kernels();

// matmul (see matmul.h) with a given kernel set.
void matmul_with(const MatmulKernels& kernels, const Matrix& w, const float* x, int64_t n, float* y,
                 ThreadPool& pool);

}  // namespace kiln
