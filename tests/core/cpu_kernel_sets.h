// Every CPU matrix kernel set this machine can run, for tests that check each against the portable
// reference: portable, then AVX2 and AVX-512 where the CPU has them, and the AVX-512 set as it runs
// on an AVX-512 CPU without AVX512_BF16 (BF16 widened to fp32).
#pragma once

#include <vector>

#include "runtime/cpu/matmul_kernels.h"

namespace kiln::test {

inline std::vector<MatmulKernels> cpu_kernel_sets() {
  std::vector<MatmulKernels> sets = matmul_kernel_sets();
  if (cpu_has_avx512_bf16_kernels()) {
    MatmulKernels without_bf16 = avx512_matmul_kernels();
    without_bf16.dot_rows_bf16 = nullptr;
    without_bf16.round_bf16 = nullptr;
    without_bf16.name = "avx512_vnni without bf16";
    sets.push_back(without_bf16);
  }
  return sets;
}

}  // namespace kiln::test
