// The forward pass's small operations and attention's inner loops for one instruction set, chosen
// together with the matmul kernels (MatmulKernels::ops): a backend forced to a set (tests,
// CpuOptions::matmul_kernels) runs every loop with it. The portable table is ops.h's reference,
// which the Vulkan shaders are tested against; the SIMD tables must stay within a few float
// roundings of it (tests/core/test_cpu_op_kernels.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/dtype.h"

namespace kiln {

struct OpKernels {
  // Every op as declared in ops.h (same arguments, same meaning).
  using RmsNorm = void (*)(const float* x, const float* weight, int64_t n, float eps, float* out);
  using Scale = void (*)(float* x, int64_t n, float factor);
  using AddInPlace = void (*)(float* x, const float* y, int64_t n);
  using GeluTanhMul = void (*)(const float* gate, const float* up, int64_t n, float* out);
  using RopeRotate = void (*)(float* x, int n_heads, int head_dim, const float* cos, const float* sin);
  using Softmax = void (*)(float* x, int64_t n);
  using ScaleSoftcap = void (*)(float* x, int64_t n, float factor, float cap);
  using AccumulateRows = void (*)(const uint8_t* rows, size_t stride, DType type, int64_t count,
                                  const float* weights, int n, float* out);

  RmsNorm rms_norm = nullptr;
  Scale scale = nullptr;
  AddInPlace add_in_place = nullptr;
  GeluTanhMul gelu_tanh_mul = nullptr;
  RopeRotate rope_rotate = nullptr;
  Softmax softmax = nullptr;
  ScaleSoftcap scale_softcap = nullptr;
  AccumulateRows accumulate_rows = nullptr;
};

// ops.h's functions: the reference.
OpKernels portable_op_kernels();
// AVX2 + FMA + F16C, 8 floats a register; only where cpu_has_avx2_kernels().
OpKernels avx2_op_kernels();
// AVX-512 F/BW/VL, 16 floats a register; only where cpu_has_avx512_kernels().
OpKernels avx512_op_kernels();

}  // namespace kiln
