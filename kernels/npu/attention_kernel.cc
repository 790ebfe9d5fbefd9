// Flash attention for one AIE-ML compute tile of the Phoenix NPU (mlir-aie npu1), one K/V tile per
// call: S = Q K^T on the bf16 matrix unit with fp32 accumulation, the sliding-window / causal mask,
// an online softmax whose running maximum is an integer (so rescaling is an exact power of two),
// and O += P V. GQA is in the data: a Q tile's rows are (token, query head) pairs of one kv head.
//
// Compiled per head size with -DKILN_NPU_HEAD_DIM=128 or 256 (see Makefile). Not compiled on
// Kiln's development machines: core/runtime/npu/npu_emulator.cpp runs the same arithmetic in the
// same order on the CPU, operation for operation (each step below names its emulator line), and
// test_npu_hardware compares the two on a Phoenix laptop.
//
// Buffers (kernels/npu/attention_layout.h): qd = descriptor + Q tile, kv = K^T tile + V tile,
// out = O (fp32, not yet divided by l) + m[q_rows] + l[q_rows], all as 32-bit words.
#define NOCPP

#include <stdint.h>

#include <aie_api/aie.hpp>

#include "attention_layout.h"

#ifndef KILN_NPU_HEAD_DIM
#error "define KILN_NPU_HEAD_DIM (128 or 256)"
#endif

namespace {

using namespace kiln_npu;

constexpr TileShape kShape = KILN_NPU_HEAD_DIM == 128 ? kShapeD128 : kShapeD256;
static_assert(KILN_NPU_HEAD_DIM == kShape.head_dim, "no kernel variant for this head size");
constexpr int D = kShape.head_dim;
constexpr int BQ = kShape.q_rows;
constexpr int BK = kShape.kv_keys;
constexpr int RB = BQ / kMmulR;  // row blocks
constexpr int KB = BK / kMmulT;  // key blocks of S (4 keys)
constexpr int PB = BK / kMmulS;  // key blocks of P as the A operand (8 keys)

using MMUL = aie::mmul<kMmulR, kMmulS, kMmulT, bfloat16, bfloat16, accfloat>;
using f16v = aie::vector<float, 16>;
using i16v = aie::vector<int32_t, 16>;
using b16v = aie::vector<bfloat16, 16>;

// Scratch in this tile's data memory (counted in compute_tile_bytes()).
alignas(32) float s_tile[BQ * BK];         // scores, 4x4 blocks, row-block major
alignas(32) bfloat16 p_tile[BQ * BK];      // probabilities, 4x8 blocks (the A operand of P V)
alignas(32) int32_t row_pos[RB * 16];      // per row block: each lane's query position (-1: no query)
alignas(32) int32_t lane_row_shift[16];    // per lane: the rescale of its row (scratch)

// Lane (i) of a 4x4 block holds row i / 4, column i % 4.
alignas(32) const int32_t kLaneCol[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};

inline float* o_ptr(int32_t* out) { return reinterpret_cast<float*>(out); }
inline float* m_ptr(int32_t* out) { return reinterpret_cast<float*>(out) + BQ * D; }
inline float* l_ptr(int32_t* out) { return reinterpret_cast<float*>(out) + BQ * D + BQ; }

// x * 2^-shift per lane, +0 where the exponent runs out (npu_math::scale_down_pow2).
inline f16v scale_down(f16v x, i16v shift) {
  const i16v bits = aie::vector_cast<int32_t>(x);
  const i16v exponent = aie::bit_and(aie::downshift(bits, 23), aie::broadcast<int32_t, 16>(0xff));
  const i16v scaled = aie::sub(bits, aie::upshift(shift, 23));
  const auto runs_out = aie::le(exponent, shift);  // includes x == 0 (exponent 0, shift >= 0)
  return aie::vector_cast<float>(aie::select(scaled, aie::zeros<int32_t, 16>(), runs_out));
}

// bf16 of an fp32 vector, round to nearest even (npu_math::round_bf16).
inline b16v to_bf16(f16v x) {
  aie::accum<accfloat, 16> a;
  a.from_vector(x);
  return a.template to_vector<bfloat16>();
}

// Float -> int32 on AIE-ML is emulated and truncates whatever set_rounding() says (UG1529,
// "Floating-point Conversion"), so floor and ceil are a conversion plus a correction: where the
// integer overshoots x (a negative fraction under truncation) step down; for ceil, where it falls
// short, step up. Exact for any conversion that lands within 1 of x, and float(n) is exact because
// callers clamp |x| <= 2^20 first (npu_math::floor_by_conversion / ceil_by_conversion).
inline i16v floor_by_conversion(f16v x) {
  const i16v n = aie::to_fixed<int32_t>(x, 0);
  return aie::select(n, aie::sub(n, aie::broadcast<int32_t, 16>(1)), aie::lt(x, aie::to_float(n, 0)));
}
inline i16v ceil_by_conversion(f16v x) {
  const i16v n = aie::to_fixed<int32_t>(x, 0);
  return aie::select(n, aie::add(n, aie::broadcast<int32_t, 16>(1)), aie::lt(aie::to_float(n, 0), x));
}

// exp2(x) for x <= 0 (npu_math::exp2_kernel): floor, bf16 fraction, cubic by Horner with bf16
// operands and fp32 accumulation, exponent add; 0 below kExpMin.
inline f16v exp2_kernel(f16v x) {
  const auto too_small = aie::lt(x, aie::broadcast<float, 16>(kExpMin));
  x = aie::max(aie::min(x, aie::zeros<float, 16>()), aie::broadcast<float, 16>(kExpMin - 1.0f));
  const i16v n = floor_by_conversion(x);
  const b16v fb = to_bf16(aie::sub(x, aie::to_float(n, 0)));  // x - floor(x) is exact, in [0, 1)
  aie::accum<accfloat, 16> acc;
  acc.from_vector(aie::broadcast<float, 16>(kExp2C2));
  acc = aie::mac(acc, aie::broadcast<bfloat16, 16>(bfloat16(kExp2C3)), fb);  // c3 is a bf16 value
  b16v ab = acc.template to_vector<bfloat16>();
  acc.from_vector(aie::broadcast<float, 16>(kExp2C1));
  acc = aie::mac(acc, ab, fb);
  ab = acc.template to_vector<bfloat16>();
  acc.from_vector(aie::broadcast<float, 16>(kExp2C0));
  acc = aie::mac(acc, ab, fb);
  const i16v bits = aie::add(aie::vector_cast<int32_t>(acc.template to_vector<float>()), aie::upshift(n, 23));
  return aie::select(aie::vector_cast<float>(bits), aie::zeros<float, 16>(), too_small);
}

// The visibility mask of S block (rb, kb) of tile t (the emulator's `visible[j]`).
inline auto visible(const int32_t* desc, int rb, int t, int kb) {
  const i16v p = aie::load_v<16>(row_pos + rb * 16);
  const i16v kp = aie::add(aie::load_v<16>(kLaneCol),
                           aie::broadcast<int32_t, 16>(desc[kDescKeyPos] + t * BK + kb * kMmulT));
  auto m = aie::lt(kp, aie::broadcast<int32_t, 16>(desc[kDescKeyEnd])) &
           aie::lt(kp, aie::add(p, aie::broadcast<int32_t, 16>(1)));
  if (desc[kDescWindow] > 0) m = m & aie::lt(aie::sub(p, aie::broadcast<int32_t, 16>(desc[kDescWindow])), kp);
  return m;
}

}  // namespace

extern "C" {

// Start of a step: O = 0, m = kNoMax, l = 0; each row's query position for the mask.
void attn_step_begin(int32_t* qd, int32_t* out) {
  aie::set_rounding(aie::rounding_mode::conv_even);  // the bf16 conversions (srs); float -> int ignores it
  float* o = o_ptr(out);
  for (int i = 0; i < BQ * D; i += 16) aie::store_v(o + i, aie::zeros<float, 16>());
  for (int i = 0; i < BQ; ++i) {
    m_ptr(out)[i] = kNoMax;
    l_ptr(out)[i] = 0.0f;
  }
  qd[kDescTileCounter] = 0;
  const int rows_valid = qd[kDescRowsValid], group = qd[kDescGroup];
  for (int r = 0; r < BQ; ++r) {
    const int32_t p = r < rows_valid ? qd[kDescQueryPos] + (qd[kDescFirstRow] + r) / group : -1;
    for (int c = 0; c < 4; ++c) row_pos[(r / 4) * 16 + (r % 4) * 4 + c] = p;
  }
}

// One K/V tile of the step.
void attn_tile(int32_t* qd, const int32_t* kv, int32_t* out) {
  const int t = qd[kDescTileCounter]++;
  if (qd[kDescRowsValid] == 0 || t >= qd[kDescTilesValid]) return;  // idle row or padding tile
  const bfloat16* q = reinterpret_cast<const bfloat16*>(qd + kDescriptorWords);
  const bfloat16* kt = reinterpret_cast<const bfloat16*>(kv);
  const bfloat16* vt = kt + BK * D;
  float* o = o_ptr(out);
  float* m = m_ptr(out);
  float* l = l_ptr(out);
  const f16v neg_inf = aie::broadcast<float, 16>(-__builtin_inff());
  // Row blocks past the last valid row hold only padding: every key is masked for them, so they
  // would leave O = 0, l = 0 and m unchanged anyway. Skipping them is what makes decode (2-4 rows of
  // a 16- or 32-row tile) cheap; the emulator, which computes valid rows only, gives the same out.
  const int row_blocks = (qd[kDescRowsValid] + kMmulR - 1) / kMmulR;

  // S = Q K^T, masked (emulator: one mmul_lane per 8 head-dim elements, then `visible`).
  for (int rb = 0; rb < row_blocks; ++rb) {
    for (int kb = 0; kb < KB; ++kb) {
      MMUL c;
      c.mul(aie::load_v<MMUL::size_A>(q + (rb * (D / 8)) * MMUL::size_A),
            aie::load_v<MMUL::size_B>(kt + kb * MMUL::size_B));
      for (int d8 = 1; d8 < D / 8; ++d8)
        c.mac(aie::load_v<MMUL::size_A>(q + (rb * (D / 8) + d8) * MMUL::size_A),
              aie::load_v<MMUL::size_B>(kt + (d8 * KB + kb) * MMUL::size_B));
      const f16v s = c.template to_vector<float>();
      aie::store_v(s_tile + (rb * KB + kb) * 16, aie::select(neg_inf, s, visible(qd, rb, t, kb)));
    }
  }

  for (int rb = 0; rb < row_blocks; ++rb) {
    // Row maxima: lanes of a 4x4 block are (row, column); fold the columns, then the key blocks.
    f16v mx = aie::load_v<16>(s_tile + rb * KB * 16);
    for (int kb = 1; kb < KB; ++kb) mx = aie::max(mx, aie::load_v<16>(s_tile + (rb * KB + kb) * 16));
    const aie::vector<float, 8> half = aie::max(aie::filter_even(mx, 1), aie::filter_odd(mx, 1));
    const aie::vector<float, 4> rowmax = aie::max(aie::filter_even(half, 1), aie::filter_odd(half, 1));
    // m_new = max(m, ceil(rowmax clamped to +-2^20)); rows without a visible key keep m.
    // (Four copies of the 4 maxima, so no lane holds undefined bits; lanes 0-3 are used.)
    const f16v rowmax16 = aie::concat(rowmax, rowmax, rowmax, rowmax);
    const f16v clamped = aie::max(aie::min(rowmax16, aie::broadcast<float, 16>(kMaxClamp)),
                                  aie::broadcast<float, 16>(-kMaxClamp));
    const i16v tile_ceil = ceil_by_conversion(clamped);
    bool rescale = false;
    for (int i = 0; i < 4; ++i) {
      const int r = rb * 4 + i;
      const int32_t old_m = int32_t(m[r]);
      int32_t m_new = old_m;
      if (rowmax[i] != -__builtin_inff()) {
        const int32_t tile_m = tile_ceil[i];
        m_new = tile_m > old_m ? tile_m : old_m;
      }
      int32_t shift = m_new - old_m;
      shift = shift > 255 ? 255 : shift;
      rescale |= shift > 0;
      for (int c = 0; c < 4; ++c) lane_row_shift[i * 4 + c] = shift;
      m[r] = float(m_new);
    }
    // Exact power-of-two rescaling of O and l (emulator: scale_down_pow2).
    if (rescale) {
      const i16v shift = aie::load_v<16>(lane_row_shift);
      for (int db = 0; db < D / 4; ++db) {
        float* blk = o + (rb * (D / 4) + db) * 16;
        aie::store_v(blk, scale_down(aie::load_v<16>(blk), shift));
      }
      for (int i = 0; i < 4; ++i)
        l[rb * 4 + i] = scale_down(aie::broadcast<float, 16>(l[rb * 4 + i]),
                                   aie::broadcast<int32_t, 16>(lane_row_shift[i * 4]))[0];
    }
    // P = bf16(exp2(S - m)), written as 4x8 A blocks: two 4x4 S blocks side by side.
    f16v mrow;
    for (int i = 0; i < 16; ++i) mrow.set(m[rb * 4 + i / 4], i);
    for (int pb = 0; pb < PB; ++pb) {
      const f16v s0 = aie::load_v<16>(s_tile + (rb * KB + 2 * pb) * 16);
      const f16v s1 = aie::load_v<16>(s_tile + (rb * KB + 2 * pb + 1) * 16);
      const b16v p0 = to_bf16(exp2_kernel(aie::sub(s0, mrow)));
      const b16v p1 = to_bf16(exp2_kernel(aie::sub(s1, mrow)));
      const auto [rows01, rows23] = aie::interleave_zip(p0, p1, 4);
      aie::store_v(p_tile + (rb * PB + pb) * 32, aie::concat(rows01, rows23));
    }
  }

  // l += P 1 and O += P V (emulator: one mmul_lane per 8 keys onto the loaded l and O).
  alignas(32) static const bfloat16 ones[32] = {
      1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
      1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  for (int rb = 0; rb < row_blocks; ++rb) {
    f16v linit;
    for (int i = 0; i < 16; ++i) linit.set(l[rb * 4 + i / 4], i);
    MMUL lsum(linit);
    for (int pb = 0; pb < PB; ++pb)
      lsum.mac(aie::load_v<MMUL::size_A>(p_tile + (rb * PB + pb) * 32), aie::load_v<MMUL::size_B>(ones));
    const f16v lv = lsum.template to_vector<float>();
    for (int i = 0; i < 4; ++i) l[rb * 4 + i] = lv[i * 4];
    for (int db = 0; db < D / 4; ++db) {
      float* blk = o + (rb * (D / 4) + db) * 16;
      MMUL acc(aie::load_v<16>(blk));
      for (int pb = 0; pb < PB; ++pb)
        acc.mac(aie::load_v<MMUL::size_A>(p_tile + (rb * PB + pb) * 32),
                aie::load_v<MMUL::size_B>(vt + (pb * (D / 4) + db) * MMUL::size_B));
      aie::store_v(blk, acc.template to_vector<float>());
    }
  }
}

}  // extern "C"
