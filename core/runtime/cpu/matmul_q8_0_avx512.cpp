// AVX-512 VNNI Q8_0 / Q4_0 kernels against integer activations: matmul_q8_0_x86.inc with vpdpbusd /
// vpdpwssd (256-bit, AVX512VL) for each block's products and 32 vector registers for the 8 tokens a
// kernel takes at once, and for prefill the repacked 8-row tiles of matmul_q8_0_gemm_vnni.inc (and
// of matmul_block32_gemm_vnni.inc for GGUF's other 32-weight formats, matmul_iq4xs_gemm_vnni.inc for IQ4_XS).
// Compiled for baseline x86-64; run only where the CPU has the instructions.
#include "quant/block32_formats.h"
#include "quant/iq4_xs.h"
#include "runtime/cpu/matmul_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#define KILN_Q8_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define KILN_Q8_VNNI 1
#define KILN_Q8_TOKENS 8

namespace kiln {
namespace {
#include "runtime/cpu/matmul_q8_0_x86.inc"
#include "runtime/cpu/matmul_block32_x86.inc"
#include "runtime/cpu/matmul_q8_0_gemm_vnni.inc"
#include "runtime/cpu/matmul_block32_gemm_vnni.inc"
#include "runtime/cpu/matmul_iq4xs_x86.inc"
#include "runtime/cpu/matmul_iq4xs_gemm_vnni.inc"
}  // namespace

void add_avx512_q8_0_kernels(MatmulKernels& k) {
  fill_q8_0_kernels(k);
  k.dot_rows_q8_0 = gemm_rows<Q8_0Format>;
  k.dot_rows_q4_0 = gemm_rows<Q4_0Format>;
}

void add_avx512_block32_kernels(MatmulKernels& k) {
  fill_block32_kernels(k);
  fill_block32_gemm_kernels(k);
}

void add_avx512_iq4xs_kernels(MatmulKernels& k) {
  fill_iq4xs_kernels(k);
  fill_iq4xs_gemm_kernels(k);
}

}  // namespace kiln

#else  // not x86-64: the portable kernels stand in

namespace kiln {
void add_avx512_q8_0_kernels(MatmulKernels& k) { add_portable_q8_0_kernels(k); }
void add_avx512_block32_kernels(MatmulKernels& k) { add_portable_block32_kernels(k); }
void add_avx512_iq4xs_kernels(MatmulKernels& k) { add_portable_iq4xs_kernels(k); }
}  // namespace kiln

#endif
