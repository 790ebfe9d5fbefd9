// AVX2 Q8_0 / Q4_0 kernels against int8 activations: matmul_q8_0_x86.inc compiled for AVX2 + FMA +
// F16C. Compiled for baseline x86-64 like matmul_avx2.cpp: only the kernels use AVX2, and they run
// only after the CPU was checked.
#include "quant/block32_formats.h"
#include "quant/iq4_xs.h"
#include "runtime/cpu/matmul_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#define KILN_Q8_TARGET __attribute__((target("avx2,fma,f16c")))
#define KILN_Q8_VNNI 0
#define KILN_Q8_TOKENS 4

namespace kiln {
namespace {
#include "runtime/cpu/matmul_q8_0_x86.inc"
#include "runtime/cpu/matmul_block32_x86.inc"
#include "runtime/cpu/matmul_iq4xs_x86.inc"
}  // namespace

void add_avx2_q8_0_kernels(MatmulKernels& k) { fill_q8_0_kernels(k); }
void add_avx2_block32_kernels(MatmulKernels& k) { fill_block32_kernels(k); }
void add_avx2_iq4xs_kernels(MatmulKernels& k) { fill_iq4xs_kernels(k); }

}  // namespace kiln

#else  // not x86-64: the portable kernels stand in

namespace kiln {
void add_avx2_q8_0_kernels(MatmulKernels& k) { add_portable_q8_0_kernels(k); }
void add_avx2_block32_kernels(MatmulKernels& k) { add_portable_block32_kernels(k); }
void add_avx2_iq4xs_kernels(MatmulKernels& k) { add_portable_iq4xs_kernels(k); }
}  // namespace kiln

#endif
