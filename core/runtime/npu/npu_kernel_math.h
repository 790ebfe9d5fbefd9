// The AIE attention kernel's arithmetic, operation by operation, for the emulator. Every function
// here is one vector operation (or one documented hardware behaviour) of
// kernels/npu/attention_kernel.cc, named there in comments.
//
// Two hardware facts shape this file (sources in core/runtime/npu/DESIGN.md, "The arithmetic"):
// - Float -> int32 vector conversion on AIE-ML (XDNA 1) is emulated and rounds toward zero
//   (UG1529, "Floating-point Conversion": float -> 32b, vector, AIE-ML: "Emulated, uses
//   rounding_mode::symmetric_zero"); set_rounding() does not change it. The kernel therefore builds
//   floor and ceil from that conversion plus a comparison-based correction, which is exact for any
//   conversion that lands within 1 of its input, so a later AIE API that rounds to nearest instead
//   gives the same result (tested with both models).
// - The bf16 matrix unit (AM020, "Floating-Point Vector Unit") aligns the products of one mmul and
//   the accumulator lane in a mantissa shifter, adds them in one post-adder and normalises once: one
//   mmul step is acc = round_fp32(acc + sum of its 8 products), not 8 roundings. Denormals are not
//   supported (flushed to zero).
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

// A float the AIE-ML float datapath holds: subnormals read and written as (signed) zero.
inline float flush_denormal(float f) {
  return std::fabs(f) < 0x1p-126f ? std::copysign(0.0f, f) : f;
}

// How aie::to_fixed<int32_t>(float vector, 0) rounds. UG1529 documents TowardZero for AIE-ML; the
// kernel's results must not depend on it, and tests run both.
enum class FloatToInt { TowardZero, NearestEven };

// aie::to_fixed<int32_t>(x, 0) for |x| < 2^31 (the kernel clamps before converting).
inline int32_t to_fixed_int32(float x, FloatToInt mode = FloatToInt::TowardZero) {
  return int32_t(mode == FloatToInt::TowardZero ? std::trunc(x) : std::nearbyint(x));
}

// floor(x) as the kernel builds it: n = to_fixed(x); where float(n) > x (a negative fraction under
// truncation), n - 1. float(n) is exact for |x| < 2^24, which the kernel's clamps guarantee.
inline int32_t floor_by_conversion(float x, FloatToInt mode = FloatToInt::TowardZero) {
  const int32_t n = to_fixed_int32(x, mode);
  return float(n) > x ? n - 1 : n;
}

// ceil(x) likewise: where float(n) < x (a positive fraction under truncation), n + 1.
inline int32_t ceil_by_conversion(float x, FloatToInt mode = FloatToInt::TowardZero) {
  const int32_t n = to_fixed_int32(x, mode);
  return float(n) < x ? n + 1 : n;
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

// One element-wise aie::mac on fp32 lanes: acc + a * b with a, b bf16 values (exact product), one
// rounding.
inline float mac_bf16(float acc, float a, float b) { return flush_denormal(acc + a * b); }

// exp2(x) as the kernel computes it: x clamped to [kExpMin - 1, 0], n = floor by conversion,
// f = x - n (exact, in [0, 1)), 2^f by Horner on the cubic of attention_layout.h with bf16
// operands and fp32 accumulation, then n added to the exponent; 0 below kExpMin (and for NaN).
inline float exp2_kernel(float x, FloatToInt mode = FloatToInt::TowardZero) {
  if (!(x >= kiln_npu::kExpMin)) return 0.0f;
  if (x > 0.0f) x = 0.0f;
  const int32_t n = floor_by_conversion(x, mode);
  const float fb = round_bf16(x - float(n));
  float acc = mac_bf16(kiln_npu::kExp2C2, kiln_npu::kExp2C3, fb);  // c3 is a bf16 value already
  acc = mac_bf16(kiln_npu::kExp2C1, round_bf16(acc), fb);
  acc = mac_bf16(kiln_npu::kExp2C0, round_bf16(acc), fb);
  // acc is in [1, 2]; n >= -126 keeps the result normal.
  const uint32_t bits = std::bit_cast<uint32_t>(acc) + (uint32_t(n) << 23);
  return std::bit_cast<float>(bits);
}

// The integer running maximum of a tile: the largest visible score clamped to +-kMaxClamp, then
// ceil by conversion.
inline float ceil_clamped(float x, FloatToInt mode = FloatToInt::TowardZero) {
  const float c = x > kiln_npu::kMaxClamp ? kiln_npu::kMaxClamp : (x < -kiln_npu::kMaxClamp ? -kiln_npu::kMaxClamp : x);
  return float(ceil_by_conversion(c, mode));
}

// One mmul step of one output lane: acc + products[0] + ... + products[count - 1] with one rounding
// to fp32 (AM020's single post-adder and normalisation). Products of bf16 values have at most 16
// significant bits, so the double sum is exact unless the terms span more than 2^37 in magnitude,
// where the smaller ones lie far below the fp32 result's last bit anyway.
inline float mmul_lane(float acc, const float* products, int count) {
  double sum = acc;
  for (int i = 0; i < count; ++i) sum += double(products[i]);
  return flush_denormal(float(sum));
}

}  // namespace kiln::npu_math
