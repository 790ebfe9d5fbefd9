// The AVX-512 set: the AVX2 set with K-quant kernels (and Q8_0 / Q4_0 ones from
// matmul_q8_0_avx512.cpp) that fuse each multiply-add of the sub-block scales into AVX-512 VNNI's
// vpdpwssd (256-bit, AVX512VL), with 32 vector registers for the 8 tokens a kernel takes at once.
// Measured on Zen 4 (one core, 1152 x 6912, 64 tokens): Q4_K 119 (AVX2) -> 154 GFLOP/s; decode,
// which waits on memory, is unchanged. 512-bit Q4_K / Q6_K kernels (64 weights a register, half the
// instructions, the same bits) were no faster on Zen 4, which splits each 512-bit operation in two:
// one token, one core, 2560 columns, in L2 Q4_K 6.5 -> 6.9 ns a super-block, streamed 7.5 -> 7.5;
// Q6_K streamed 9.3 -> 10.7 (bench_decode_token's BM_kquant_decode times the streamed case).
// Compiled for baseline x86-64; the kernels run only where the CPU has the instructions.
#include "runtime/cpu/matmul_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstring>

#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"

#define KILN_KQUANT_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define KILN_KQUANT_VNNI 1
#define KILN_KQUANT_TOKENS 8

namespace kiln {
namespace {
#include "runtime/cpu/matmul_kquant_x86.inc"
}  // namespace

bool cpu_has_avx512_kernels() {
  __builtin_cpu_init();
  return cpu_has_avx2_kernels() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

MatmulKernels avx512_matmul_kernels() {
  MatmulKernels k = avx2_matmul_kernels();
  k.name = "avx512_vnni";
  k.ops = avx512_op_kernels();
  fill_kquant_kernels(k);
  add_avx512_q8_0_kernels(k);
  add_avx512_block32_kernels(k);
  add_avx512_iq4xs_kernels(k);
  add_avx512_float_kernels(k);
  if (k.dot_rows_bf16) k.name = "avx512_vnni_bf16";  // BF16 weights: vdpbf16ps, activations rounded to bf16
  return k;
}

}  // namespace kiln

#else  // not x86-64

namespace kiln {
bool cpu_has_avx512_kernels() { return false; }
MatmulKernels avx512_matmul_kernels() { return portable_matmul_kernels(); }
}  // namespace kiln

#endif
