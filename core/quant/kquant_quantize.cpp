// K-quant quantizers, written from the block layouts (quant/kquant_blocks.h).
//
// Two levels of scale: each sub-block gets the scale (and min) that fits it best, then those are
// themselves quantized against the super-block's fp16 d / dmin. The per-sub-block search is the
// idea llama.cpp's quantizers use: rounding to the range's end points wastes levels on the one
// extreme weight, so we try a band of scales around the range-derived one, refit scale and min by
// least squares for the levels each gives, and keep the one with the smallest squared error.
#include "quant/kquant_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kiln/types.h"
#include "quant/convert.h"
#include "quant/kquant_blocks.h"

namespace kiln {
namespace {

constexpr int kSearchSteps = 10;       // candidates each side of the range-derived scale
constexpr float kSearchStep = 0.1f;    // in quantization levels
constexpr int kRefinements = 2;        // least-squares / re-round passes after the search

// Rounds v to the nearest integer in [lo, hi]; nan goes to lo so every input gives valid bytes.
int round_clamped(float v, int lo, int hi) {
  if (!(v >= static_cast<float>(lo))) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(std::lround(v));
}

// x ~ scale * q - min with q in 0..nmax, scale >= 0 and min >= 0 (GGUF stores min as a subtrahend,
// so a sub-block that is all positive keeps min = 0, i.e. the level 0 stands for zero).
struct AffineFit {
  float scale = 0;
  float min = 0;
};

// Least squares of x ~ a q + b for the given levels, with b <= 0. Returns the squared error.
float refit_affine(const float* x, const uint8_t* q, int n, AffineFit& fit) {
  double sq = 0, sqq = 0, sx = 0, sxq = 0;
  for (int i = 0; i < n; ++i) {
    sq += q[i];
    sqq += double(q[i]) * q[i];
    sx += x[i];
    sxq += double(x[i]) * q[i];
  }
  double a = 0, b = 0;
  const double det = sqq * n - sq * sq;
  if (det > 0) {
    a = (n * sxq - sq * sx) / det;
    b = (sqq * sx - sq * sxq) / det;
  }
  if (b > 0 || det <= 0) {  // the offset would have to be added: pin it to zero
    b = 0;
    a = sqq > 0 ? sxq / sqq : 0;
  }
  if (a < 0) a = 0;
  fit.scale = static_cast<float>(a);
  fit.min = static_cast<float>(-b);
  double err = 0;
  for (int i = 0; i < n; ++i) {
    const double e = a * q[i] + b - x[i];
    err += e * e;
  }
  return static_cast<float>(err);
}

void round_affine(const float* x, int n, int nmax, const AffineFit& fit, uint8_t* q) {
  const float inv = fit.scale > 0 ? 1.0f / fit.scale : 0.0f;
  for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(round_clamped((x[i] + fit.min) * inv, 0, nmax));
}

AffineFit search_affine(const float* x, int n, int nmax) {
  float lo = 0, hi = 0;  // the range always includes 0: min >= 0 means level 0 is <= 0
  for (int i = 0; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  AffineFit best{0, -lo};
  if (!(hi > lo)) return best;  // all zero (or nan)
  uint8_t q[32];
  float best_err = std::numeric_limits<float>::infinity();
  for (int step = -kSearchSteps; step <= kSearchSteps; ++step) {
    const float levels = static_cast<float>(nmax) + kSearchStep * static_cast<float>(step);
    AffineFit trial{(hi - lo) / levels, -lo};
    round_affine(x, n, nmax, trial, q);
    const float err = refit_affine(x, q, n, trial);
    if (err < best_err) {
      best_err = err;
      best = trial;
    }
  }
  for (int pass = 0; pass < kRefinements; ++pass) {  // re-round against the fitted scale, refit
    AffineFit trial = best;
    round_affine(x, n, nmax, trial, q);
    const float err = refit_affine(x, q, n, trial);
    if (!(err < best_err)) break;
    best_err = err;
    best = trial;
  }
  return best;
}

// x ~ scale * q with q in -32..31 (Q6_K). The longer, negative side gets the largest magnitude
// first; the search also tries mapping it to the positive end.
float search_symmetric(const float* x, int n) {
  float max = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(max)) max = x[i];
  if (!(max != 0)) return 0;
  float best_scale = 0, best_err = std::numeric_limits<float>::infinity();
  auto try_scale = [&](float scale) {
    double sxq = 0, sqq = 0;
    int q[16];
    for (int i = 0; i < n; ++i) {
      q[i] = round_clamped(x[i] / scale, -32, 31);
      sxq += double(x[i]) * q[i];
      sqq += double(q[i]) * q[i];
    }
    if (sqq <= 0) return;
    const float fitted = static_cast<float>(sxq / sqq);
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double e = double(fitted) * q[i] - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = static_cast<float>(err);
      best_scale = fitted;
    }
  };
  for (int step = -kSearchSteps; step <= kSearchSteps; ++step) {
    const float delta = kSearchStep * static_cast<float>(step);
    try_scale(max / -(32.0f + delta));
    try_scale(max / (31.0f + delta));
  }
  for (int pass = 0; pass < kRefinements && best_scale != 0; ++pass) try_scale(best_scale);
  return best_scale;
}

// fp16 super-block scale for sub-block values up to `largest`, and its value as stored.
float stored_super_scale(float largest, int levels, uint16_t& bits) {
  bits = float_to_fp16(largest / static_cast<float>(levels));
  return fp16_to_float(bits);
}

// Packs 6-bit scale and min of sub-block s (0..7) into Q4_K / Q5_K's 12 scale bytes
// (the inverse of unpack_scale_min in kquants.cpp).
void pack_scale_min(uint8_t* bytes, int s, int scale, int min) {
  if (s < 4) {
    bytes[s] = static_cast<uint8_t>((bytes[s] & 0xC0) | scale);
    bytes[s + 4] = static_cast<uint8_t>((bytes[s + 4] & 0xC0) | min);
  } else {
    bytes[s + 4] = static_cast<uint8_t>((scale & 15) | ((min & 15) << 4));
    bytes[s - 4] = static_cast<uint8_t>(bytes[s - 4] | ((scale >> 4) << 6));
    bytes[s] = static_cast<uint8_t>(bytes[s] | ((min >> 4) << 6));
  }
}

// Q4_K and Q5_K share the scale part: 8 sub-blocks of 32, 6-bit scales and mins. Writes d, dmin
// and the 12 scale bytes; levels[i] (0..nmax) are rounded against the stored scales.
void quantize_affine_superblock(const float* x, int nmax, uint16_t& d, uint16_t& dmin, uint8_t* scales,
                                uint8_t* levels) {
  AffineFit fits[8];
  float max_scale = 0, max_min = 0;
  for (int s = 0; s < 8; ++s) {
    fits[s] = search_affine(x + 32 * s, 32, nmax);
    max_scale = std::max(max_scale, fits[s].scale);
    max_min = std::max(max_min, fits[s].min);
  }
  const float d_value = stored_super_scale(max_scale, 63, d);
  const float dmin_value = stored_super_scale(max_min, 63, dmin);
  std::memset(scales, 0, 12);
  for (int s = 0; s < 8; ++s) {
    // The 6-bit codes either side of the fitted scale and min: keep the pair that fits best.
    const float* xs = x + 32 * s;
    const float ideal_ls = d_value > 0 ? fits[s].scale / d_value : 0.0f;
    const float ideal_lm = dmin_value > 0 ? fits[s].min / dmin_value : 0.0f;
    int best_ls = 0, best_lm = 0;
    float best_err = std::numeric_limits<float>::infinity();
    for (int ls : {round_clamped(std::floor(ideal_ls), 0, 63), round_clamped(std::ceil(ideal_ls), 0, 63)}) {
      for (int lm : {round_clamped(std::floor(ideal_lm), 0, 63), round_clamped(std::ceil(ideal_lm), 0, 63)}) {
        const AffineFit stored{d_value * static_cast<float>(ls), dmin_value * static_cast<float>(lm)};
        uint8_t q[32];
        round_affine(xs, 32, nmax, stored, q);
        float err = 0;
        for (int i = 0; i < 32; ++i) {
          const float e = stored.scale * q[i] - stored.min - xs[i];
          err += e * e;
        }
        if (err < best_err) {
          best_err = err;
          best_ls = ls;
          best_lm = lm;
        }
      }
    }
    pack_scale_min(scales, s, best_ls, best_lm);
    const AffineFit stored{d_value * static_cast<float>(best_ls), dmin_value * static_cast<float>(best_lm)};
    round_affine(xs, 32, nmax, stored, levels + 32 * s);
  }
}

void quantize_q4k(const float* x, BlockQ4K& b) {
  uint8_t q[kSuperBlockSize];
  quantize_affine_superblock(x, 15, b.d, b.dmin, b.scales, q);
  // i = 64 c + 32 k + l: low (k = 0) or high (k = 1) nibble of qs[32 c + l].
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
}

void quantize_q5k(const float* x, BlockQ5K& b) {
  uint8_t q[kSuperBlockSize];
  quantize_affine_superblock(x, 31, b.d, b.dmin, b.scales, q);
  std::memset(b.qh, 0, sizeof(b.qh));
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
      b.qs[32 * c + l] = static_cast<uint8_t>((lo & 15) | ((hi & 15) << 4));
      // bit s of qh[i % 32] is the fifth bit of weight i, s = i / 32
      b.qh[l] = static_cast<uint8_t>(b.qh[l] | ((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
    }
  }
}

void quantize_q6k(const float* x, BlockQ6K& b) {
  float scales[16];
  float max_abs = 0;
  for (int s = 0; s < 16; ++s) {
    scales[s] = search_symmetric(x + 16 * s, 16);
    max_abs = std::max(max_abs, std::fabs(scales[s]));
  }
  const float d_value = stored_super_scale(max_abs, 127, b.d);
  int q[kSuperBlockSize];
  for (int s = 0; s < 16; ++s) {
    // The 8-bit codes either side of the fitted scale: keep the one that fits best.
    const float ideal = d_value > 0 ? scales[s] / d_value : 0.0f;
    float best_err = std::numeric_limits<float>::infinity();
    b.scales[s] = 0;  // kept when no error compares (nan input)
    for (int i = 0; i < 16; ++i) q[16 * s + i] = 32;
    for (int ls : {round_clamped(std::floor(ideal), -128, 127), round_clamped(std::ceil(ideal), -128, 127)}) {
      const float step = d_value * static_cast<float>(ls);
      int trial[16];
      float err = 0;
      for (int i = 0; i < 16; ++i) {
        trial[i] = step != 0 ? round_clamped(x[16 * s + i] / step, -32, 31) : 0;
        const float e = step * static_cast<float>(trial[i]) - x[16 * s + i];
        err += e * e;
      }
      if (err < best_err) {
        best_err = err;
        b.scales[s] = static_cast<int8_t>(ls);
        for (int i = 0; i < 16; ++i) q[16 * s + i] = trial[i] + 32;
      }
    }
  }
  std::memset(b.ql, 0, sizeof(b.ql));
  std::memset(b.qh, 0, sizeof(b.qh));
  // i = 128 h + 32 j + l: low 4 bits in the low (j < 2) or high (j >= 2) nibble of
  // ql[64 h + 32 (j % 2) + l]; high 2 bits in bits 2j..2j+1 of qh[32 h + l].
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const int h = i / 128, j = (i / 32) % 4, l = i % 32;
    uint8_t& low = b.ql[64 * h + 32 * (j % 2) + l];
    low = static_cast<uint8_t>(low | ((q[i] & 15) << (j < 2 ? 0 : 4)));
    b.qh[32 * h + l] = static_cast<uint8_t>(b.qh[32 * h + l] | ((q[i] >> 4) << (2 * j)));
  }
}

template <typename Block>
void quantize_blocks(const float* src, int64_t n, void* dst, void (*one)(const float*, Block&)) {
  uint8_t* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / kSuperBlockSize; ++i) {
    Block b;  // built here, then copied: dst need not be aligned for uint16_t
    one(src + i * kSuperBlockSize, b);
    std::memcpy(out + i * sizeof(Block), &b, sizeof(Block));
  }
}

}  // namespace

bool can_quantize_kquant(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

void quantize_row_kquant(DType t, const float* src, int64_t n, void* dst) {
  if (n % kSuperBlockSize != 0)
    throw Error("quantize_row_kquant: " + std::to_string(n) + " weights is not a whole number of 256-weight super-blocks");
  switch (t) {
    case DType::Q4_K: quantize_blocks<BlockQ4K>(src, n, dst, quantize_q4k); return;
    case DType::Q5_K: quantize_blocks<BlockQ5K>(src, n, dst, quantize_q5k); return;
    case DType::Q6_K: quantize_blocks<BlockQ6K>(src, n, dst, quantize_q6k); return;
    default: break;
  }
  throw Error(std::string("quantize_row_kquant: ") + to_string(t) + " cannot be written (Kiln writes Q4_K, Q5_K and Q6_K)");
}

}  // namespace kiln
