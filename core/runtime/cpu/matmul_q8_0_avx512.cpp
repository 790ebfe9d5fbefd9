// AVX-512 VNNI Q8_0 / Q4_0 kernels against int8 activations: matmul_q8_0_x86.inc with vpdpbusd
// (256-bit, AVX512VL) for each block's byte products, and 32 vector registers for the 8 tokens a
// kernel takes at once. Compiled for baseline x86-64; run only where the CPU has the instructions.
#include "runtime/cpu/matmul_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#define KILN_Q8_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define KILN_Q8_VNNI 1
#define KILN_Q8_TOKENS 8

namespace kiln {
namespace {
#include "runtime/cpu/matmul_q8_0_x86.inc"
}  // namespace

void add_avx512_q8_0_kernels(MatmulKernels& k) { fill_q8_0_kernels(k); }

}  // namespace kiln

#else  // not x86-64: the portable kernels stand in

namespace kiln {
void add_avx512_q8_0_kernels(MatmulKernels& k) { add_portable_q8_0_kernels(k); }
}  // namespace kiln

#endif
