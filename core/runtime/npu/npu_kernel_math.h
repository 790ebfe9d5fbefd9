// The AIE attention kernel's arithmetic, operation by operation, for the emulator. Every function
// here is one vector operation of kernels/npu/attention_kernel.cc (named there in comments).
//
// What makes exact emulation possible: every product the kernel forms is bf16 x bf16, which is
// exact in fp32, so each multiply-add rounds once (the add), whether or not the host compiler fuses
// it; the only rescaling is by powers of two. The one assumption hardware must confirm is that the
// mmul unit adds its products into the fp32 accumulator one at a time, in index order, rounding to
// nearest even (see DESIGN.md, "What only hardware can settle").
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "attention_layout.h"

namespace kiln::npu_math {

// fp32 -> bf16 -> fp32, round to nearest even (srs with rounding mode conv_even).
inline float round_bf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return f;  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

// x * 2^-shift with shift >= 0, flushed to +0 when the result would not be a normal float
// (the kernel subtracts shift << 23 from the bit pattern and selects 0 where the exponent runs out).
inline float scale_down_pow2(float x, int64_t shift) {
  if (shift == 0) return x;
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const int64_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0 || exponent - shift <= 0) return 0.0f;
  return std::bit_cast<float>(bits - (uint32_t(shift) << 23));
}

// exp2(x) as the kernel computes it: n = floor(x), f = x - n (exact), 2^f by Horner on the cubic of
// attention_layout.h with bf16 operands and fp32 accumulation, then 2^n added to the exponent.
// x > 0 counts as 0 (cannot happen while |m| is in range); below kExpMin the result is 0.
inline float exp2_kernel(float x) {
  if (!(x >= kiln_npu::kExpMin)) return 0.0f;  // also NaN
  if (x > 0.0f) x = 0.0f;
  const float n = std::floor(x);   // to_fixed, rounding mode floor
  const float fb = round_bf16(x - n);
  float acc = kiln_npu::kExp2C3;                   // a bf16 value already
  acc = round_bf16(acc) * fb + kiln_npu::kExp2C2;  // mac: exact product, one rounding
  acc = round_bf16(acc) * fb + kiln_npu::kExp2C1;
  acc = round_bf16(acc) * fb + kiln_npu::kExp2C0;
  // acc is in [1, 2]; n >= -126 keeps the result normal.
  const uint32_t bits = std::bit_cast<uint32_t>(acc) + (uint32_t(int32_t(n)) << 23);
  return std::bit_cast<float>(bits);
}

// The integer running maximum: ceil of a tile's largest visible score, clamped to +-kMaxClamp.
inline float ceil_clamped(float x) {
  const float c = std::ceil(x);
  return c > kiln_npu::kMaxClamp ? kiln_npu::kMaxClamp : (c < -kiln_npu::kMaxClamp ? -kiln_npu::kMaxClamp : c);
}

}  // namespace kiln::npu_math
