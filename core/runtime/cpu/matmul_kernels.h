// The inner loops of matmul for one instruction set. matmul.cpp owns threading and tiling and picks
// a kernel set at run time, so one binary runs on any x86-64 (or other) CPU and uses AVX2 where the
// CPU has it. Tests run every set the CPU supports against the same reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quant/dtype.h"
#include "quant/matrix.h"
#include "runtime/cpu/op_kernels.h"
#include "runtime/cpu/thread_pool.h"

namespace kiln {

// The weight formats matmul computes with directly: every DType (F32 .. IQ4_XS in enum order), the
// K-quants, IQ4_XS and GGUF's other 32-weight formats (quant/block32_formats.h) included. Tables are
// indexed by DType.
constexpr int kMatmulTypeCount = 15;
static_assert(static_cast<int>(DType::IQ4_XS) == kMatmulTypeCount - 1, "a DType was added: give it kernels");
inline bool is_matmul_type(DType t) { return static_cast<int>(t) < kMatmulTypeCount; }
// GGUF's 32-weight formats with kernels of their own against int8 activations (dot_rows_i8).
inline bool is_block32_matmul_type(DType t) {
  return t == DType::Q5_0 || t == DType::Q4_1 || t == DType::Q5_1 || t == DType::IQ4_NL;
}

// Activations for the K-quant kernels, rounded to int8 per 256 weights (one super-block):
// x[i] ~ d * q[i] with d = max |x| / 127 and q[i] = x[i] / d rounded to nearest. Integer products
// of 4-6 bit weights with int8 activations need far fewer instructions than float ones, and the
// rounding (at most d / 2 a weight) stays well below the weights' own.
struct ActivationBlockQ8K {
  float d;
  int8_t q[kSuperBlockSize];
  int16_t sums[kSuperBlockSize / 16];  // sums[k] = q[16 k] + ... + q[16 k + 15]: the K-quant mins and offsets
};

// out[0 .. cols / 256) = x[0 .. cols) rounded as above; cols % 256 == 0. A block holding inf or nan
// gets d = nan (so its dot products are nan). The reference for every set's quantize_q8k, which
// must give the same bits.
void quantize_activations_q8k(const float* x, int64_t cols, ActivationBlockQ8K* out);

// Activations for the Q4_0 kernels, rounded to int8 per 32 weights (one weight block):
// x[i] ~ d * q[i] with d = max |x| / 127, as for ActivationBlockQ8K. offset = -8 * (q[0] + .. + q[31])
// lets Q4_0 kernels multiply the unsigned nibbles (0..15) and start each block's integer sum at
// `offset` instead of re-centring every weight. A block holding inf or nan gets d = nan.
struct ActivationBlockQ8_0 {
  float d;
  int32_t offset;
  int8_t q[kBlockSize];
};

// out[0 .. cols / 32) = x[0 .. cols) rounded as above; cols % 32 == 0. The reference for every
// set's quantize_q8_0, which must give the same bits.
void quantize_activations_q8_0(const float* x, int64_t cols, ActivationBlockQ8_0* out);

// Activations for the Q8_0 kernels, rounded to int16 per 32 weights: d = max |x| / 32767. Q8_0
// weights are often a second rounding of K-quant ones (model/weights.cpp), and int8 activations on
// top measurably moved the K-quant fixtures' logits; int16 costs the same instructions with VNNI
// (vpdpwssd: 16 products a 256-bit register, against vpdpbusd's 32 plus a vpsignb per token).
struct ActivationBlockQ16 {
  float d;
  int16_t q[kBlockSize];
};

// out[0 .. cols / 32) = x[0 .. cols) rounded as above; cols % 32 == 0; inf or nan: d = nan. The
// reference for every set's quantize_q16.
void quantize_activations_q16(const float* x, int64_t cols, ActivationBlockQ16* out);

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

  // The same for K-quant rows (cols % 256 == 0) and several tokens, against activations rounded by
  // quantize_activations_q8k: y[t * ld_y + i] = dot(row i, token t) for t < tokens.
  // x: [tokens][cols / 256]. Unpacking a super-block once for several tokens makes prefill cheaper.
  using DotRowsQ8K = void (*)(const uint8_t* w, size_t stride, int64_t rows, int64_t cols,
                              const ActivationBlockQ8K* x, int64_t tokens, float* y, int64_t ld_y);

  // The same for Q4_0 rows (cols % 32 == 0) against activations rounded by
  // quantize_activations_q8_0: y[t * ld_y + i] = dot(row i, token t). x: [tokens][cols / 32].
  using DotRowsQ4_0 = void (*)(const uint8_t* w, size_t stride, int64_t rows, int64_t cols,
                               const ActivationBlockQ8_0* x, int64_t tokens, float* y, int64_t ld_y);
  using QuantizeQ8_0 = void (*)(const float* x, int64_t cols, ActivationBlockQ8_0* out);
  // And for GGUF's other 32-weight formats (Q5_0, Q4_1, Q5_1, IQ4_NL) and IQ4_XS, indexed by DType,
  // against the same activations (Q5_0 starts each block's sum at 2 * offset, -16 times the activations' sum).
  // And for Q8_0 rows against activations rounded by quantize_activations_q16.
  using DotRowsQ8_0 = void (*)(const uint8_t* w, size_t stride, int64_t rows, int64_t cols,
                               const ActivationBlockQ16* x, int64_t tokens, float* y, int64_t ld_y);
  using QuantizeQ16 = void (*)(const float* x, int64_t cols, ActivationBlockQ16* out);

  // quantize_activations_q8k, vectorized for the set.
  using QuantizeQ8K = void (*)(const float* x, int64_t cols, ActivationBlockQ8K* out);

  // BF16 rows (any cols) against activations rounded to bf16 by round_activations_bf16 (vdpbf16ps):
  // y[t * ld_y + i] = dot(row i, token t), products exact, sums fp32. x: [tokens][cols] bf16 bits.
  using DotRowsBF16 = void (*)(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const uint16_t* x,
                               int64_t tokens, float* y, int64_t ld_y);
  using RoundBF16 = void (*)(const float* x, int64_t n, uint16_t* out);
  // F16 rows against float activations, several tokens per weight load. x: [tokens][cols].
  using DotRowsF16 = void (*)(const uint8_t* w, size_t stride, int64_t rows, int64_t cols, const float* x,
                              int64_t tokens, float* y, int64_t ld_y);

  // Indexed by DType. A set fills dot_rows and to_float for F32 .. Q4_0 and the 32-weight GGUF formats,
  // dot_rows_q8k for the K-quants (which matmul never expands to floats) and dot_rows_i8 for the
  // 32-weight GGUF formats. Where a set has
  // dot_rows_q8_0 / dot_rows_q4_0 / dot_rows_i8, matmul uses them; dot_rows and to_float are then
  // the float reference (matmul_float_activations).
  DotRows dot_rows[kMatmulTypeCount] = {};
  DotRowsQ8_0 dot_rows_q8_0 = nullptr;
  QuantizeQ16 quantize_q16 = nullptr;
  DotRowsQ4_0 dot_rows_q4_0 = nullptr;
  QuantizeQ8_0 quantize_q8_0 = nullptr;
  DotRowsQ4_0 dot_rows_i8[kMatmulTypeCount] = {};
  DotRowsQ8K dot_rows_q8k[kMatmulTypeCount] = {};
  QuantizeQ8K quantize_q8k = nullptr;
  // Where a set has them, BF16 matrices take dot_rows_bf16 (activations rounded to bf16) for any
  // number of tokens, and F16 matrices dot_rows_f16 for prefill.
  DotRowsBF16 dot_rows_bf16 = nullptr;
  RoundBF16 round_bf16 = nullptr;
  DotRowsF16 dot_rows_f16 = nullptr;
  ToFloat to_float[kMatmulTypeCount] = {};
  TileProduct tile_product = nullptr;
  // The small ops and attention's inner loops of the same instruction set (op_kernels.h).
  OpKernels ops;
};

// Plain C++ that compiles and is correct everywhere.
MatmulKernels portable_matmul_kernels();
// Adds the portable K-quant kernels to a set (matmul_kquant_portable.cpp).
void add_portable_kquant_kernels(MatmulKernels& k);

// Adds the portable / AVX2 / AVX-512 VNNI integer Q8_0 and Q4_0 kernels to a set (matmul_q8_0_*.cpp).
void add_portable_q8_0_kernels(MatmulKernels& k);
void add_avx2_q8_0_kernels(MatmulKernels& k);
void add_avx512_q8_0_kernels(MatmulKernels& k);

// Adds the portable / AVX2 / AVX-512 VNNI kernels for GGUF's other 32-weight formats (Q5_0, Q4_1,
// Q5_1, IQ4_NL):
// the float reference (dot_rows, to_float) and dot_rows_i8 (matmul_block32_*.cpp). The SIMD ones
// only when the CPU has the instructions; they add only dot_rows_i8.
void add_portable_block32_kernels(MatmulKernels& k);
void add_avx2_block32_kernels(MatmulKernels& k);
void add_avx512_block32_kernels(MatmulKernels& k);

// The same for IQ4_XS (matmul_iq4xs_*): its eight 32-weight sub-blocks a super-block against the
// same int8 activations as IQ4_NL (ActivationBlockQ8_0), in dot_rows_i8; the portable set also adds
// the float reference (dot_rows, to_float).
void add_portable_iq4xs_kernels(MatmulKernels& k);
void add_avx2_iq4xs_kernels(MatmulKernels& k);
void add_avx512_iq4xs_kernels(MatmulKernels& k);

// True on x86-64 CPUs with AVX2, FMA and F16C (checked at run time).
bool cpu_has_avx2_kernels();
// The AVX2/FMA/F16C set; only call when cpu_has_avx2_kernels().
MatmulKernels avx2_matmul_kernels();
// Adds the AVX2 K-quant kernels to a set (matmul_kquant_avx2.cpp); only when cpu_has_avx2_kernels().
void add_avx2_kquant_kernels(MatmulKernels& k);

// True on x86-64 CPUs with AVX2 and AVX-512 F/BW/VL/VNNI (checked at run time).
bool cpu_has_avx512_kernels();
// The AVX2 set with AVX-512 VNNI K-quant kernels, AVX-512 F16 kernels and, where the CPU has
// AVX512_BF16, vdpbf16ps BF16 kernels (then named avx512_vnni_bf16); only call when
// cpu_has_avx512_kernels().
MatmulKernels avx512_matmul_kernels();

// Activations for the BF16 kernels: x rounded to bf16, to nearest with ties to even; magnitudes
// below 2^-126 become a zero of the same sign (vdpbf16ps reads them so anyway), nan stays nan
// (quieted). Relative error at most 2^-8. The reference for every set's round_bf16.
uint16_t round_to_bf16(float x);
void round_activations_bf16(const float* x, int64_t n, uint16_t* out);
// True where cpu_has_avx512_kernels() and the CPU has AVX512_BF16 (vdpbf16ps, vcvtne2ps2bf16).
bool cpu_has_avx512_bf16_kernels();
// Adds the AVX-512 F16 kernels (16-wide vcvtph2ps + FMA) and, where cpu_has_avx512_bf16_kernels(),
// the BF16 ones (matmul_float_avx512.cpp); only when cpu_has_avx512_kernels().
void add_avx512_float_kernels(MatmulKernels& k);

// The fastest set this CPU runs.
MatmulKernels best_matmul_kernels();
// The sets this CPU runs, slowest first (portable, then avx2, avx512_vnni[_bf16] where it has them).
std::vector<MatmulKernels> matmul_kernel_sets();
// The set of that name; throws Error naming the sets this CPU runs for any other name.
MatmulKernels matmul_kernels_named(const std::string& name);

// matmul (see matmul.h) with a given kernel set.
void matmul_with(const MatmulKernels& kernels, const Matrix& w, const float* x, int64_t n, float* y,
                 ThreadPool& pool);

}  // namespace kiln
