// e^x without a library call, for element-wise loops that must vectorize (gelu, softmax).
// Loops using it vectorize only where the compiler may assume floating point does not trap
// (-fno-trapping-math on the file); the results are the same either way.
#pragma once

#include <bit>
#include <cstdint>

namespace kiln {

// e^x for x in [-87, 87] (clamped there), relative error about 2e-7: 2^n times a degree-6
// polynomial for e^r, |r| <= ln 2 / 2. Branch-free, so loops over it vectorize; std::tanh does not,
// and took as long as all of prefill's matrix products on the 1B shape.
inline float exp_clamped(float x) {
  x = x < -87.0f ? -87.0f : x;  // written as selects, which vectorize (std::min / max did not)
  x = x > 87.0f ? 87.0f : x;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const float n = (x * 1.44269504088896341f + kRound) - kRound;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // ln 2 in two parts, so r stays exact
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t exponent = static_cast<int32_t>(n) + 127;
  return p * std::bit_cast<float>(static_cast<uint32_t>(exponent) << 23);
}

}  // namespace kiln
