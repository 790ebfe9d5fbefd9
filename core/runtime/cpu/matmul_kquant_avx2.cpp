// AVX2 matmul kernels for GGUF's K-quants: matmul_kquant_x86.inc compiled for AVX2 + FMA + F16C.
// The file is compiled for baseline x86-64 like matmul_avx2.cpp: only the kernels use AVX2, and
// they run only after the CPU was checked.
#include "runtime/cpu/matmul_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstring>

#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"

#define KILN_KQUANT_TARGET __attribute__((target("avx2,fma,f16c")))
#define KILN_KQUANT_VNNI 0
#define KILN_KQUANT_TOKENS 8

namespace kiln {
namespace {
#include "runtime/cpu/matmul_kquant_x86.inc"
}  // namespace

void add_avx2_kquant_kernels(MatmulKernels& k) { fill_kquant_kernels(k); }

}  // namespace kiln

#else  // not x86-64: the portable K-quant kernels stand in

namespace kiln {
void add_avx2_kquant_kernels(MatmulKernels& k) { add_portable_kquant_kernels(k); }
}  // namespace kiln

#endif
