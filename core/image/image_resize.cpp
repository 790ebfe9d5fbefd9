// The tower's input, bit for bit as transformers makes it with PIL: Image.resize((size, size),
// BILINEAR) on the 8-bit RGB picture, then float64 rescale cast to float32, then (x - mean) / std.
//
// PIL's resampling (written here from reading Pillow's libImaging/Resample.c, not copied) is
// separable: a horizontal pass to 8-bit, then a vertical pass to 8-bit. Each output sample is a
// weighted sum over the inputs under a triangle centred on the output's centre; when shrinking, the
// triangle is widened by the shrink factor (that is the antialiasing). Weights are normalized to
// sum 1 in double, rounded to fixed point with 22 fraction bits, and each sum starts at one half
// so the final shift rounds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "image/image.h"

namespace kiln {
namespace {

constexpr int kFractionBits = 22;  // PIL's PRECISION_BITS: 32 - 8 result bits - 2 bits of headroom

// For every output position of one axis: the first input index, how many inputs, and their weights.
struct Taps {
  int stride = 0;                 // weights per output position (the most any position uses)
  std::vector<int> first, count;  // [out]
  std::vector<int32_t> weights;   // [out][stride], fixed point
};

Taps bilinear_taps(int in_size, int out_size) {
  const double scale = double(in_size) / out_size;
  const double widen = std::max(scale, 1.0);  // only shrinking widens the filter
  const double support = 1.0 * widen;         // the triangle's radius in input pixels
  const double inverse_widen = 1.0 / widen;   // PIL multiplies by the reciprocal; so must we, to the bit
  Taps t;
  t.stride = int(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size);
  t.count.resize(out_size);
  t.weights.assign(size_t(out_size) * t.stride, 0);
  std::vector<double> w(t.stride);
  for (int o = 0; o < out_size; ++o) {
    const double center = (o + 0.5) * scale;
    int lo = int(center - support + 0.5), hi = int(center + support + 0.5);  // truncation, as PIL
    lo = std::max(lo, 0);
    hi = std::min(hi, in_size);
    const int n = hi - lo;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      const double x = std::fabs((double(i + lo) - center + 0.5) * inverse_widen);
      w[i] = x < 1.0 ? 1.0 - x : 0.0;
      sum += w[i];
    }
    for (int i = 0; i < n; ++i) {
      const double v = sum != 0.0 ? w[i] / sum : w[i];
      const double fixed = v * double(1 << kFractionBits);
      t.weights[size_t(o) * t.stride + i] = int32_t(v < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    t.first[o] = lo;
    t.count[o] = n;
  }
  return t;
}

uint8_t to_u8(int32_t sum) {
  const int32_t v = sum >> kFractionBits;
  return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

// One pass along x (horizontal) or y: `in` is [in_h][in_w][3], the result [out_h][out_w][3].
RgbImage resample_pass(const RgbImage& in, int out_w, int out_h, bool horizontal) {
  const Taps t = horizontal ? bilinear_taps(in.width, out_w) : bilinear_taps(in.height, out_h);
  RgbImage out;
  out.width = out_w;
  out.height = out_h;
  out.pixels.resize(size_t(out_w) * out_h * 3);
  const size_t step = horizontal ? 3 : size_t(in.width) * 3;  // bytes between neighbouring taps
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      const int o = horizontal ? x : y;
      const int32_t* k = &t.weights[size_t(o) * t.stride];
      const uint8_t* src = horizontal ? &in.pixels[(size_t(y) * in.width + t.first[o]) * 3]
                                      : &in.pixels[(size_t(t.first[o]) * in.width + x) * 3];
      int32_t s0 = 1 << (kFractionBits - 1), s1 = s0, s2 = s0;
      for (int i = 0; i < t.count[o]; ++i, src += step) {
        s0 += src[0] * k[i];
        s1 += src[1] * k[i];
        s2 += src[2] * k[i];
      }
      uint8_t* dst = &out.pixels[(size_t(y) * out_w + x) * 3];
      dst[0] = to_u8(s0), dst[1] = to_u8(s1), dst[2] = to_u8(s2);
    }
  }
  return out;
}

void check_image(const RgbImage& image, const char* what) {
  if (image.width <= 0 || image.height <= 0 || image.pixels.size() != size_t(image.width) * image.height * 3)
    throw Error(std::string(what) + ": the image is empty or its pixels do not match its size");
}

}  // namespace

RgbImage resize_bilinear(const RgbImage& image, int width, int height) {
  check_image(image, "resize");
  if (width <= 0 || height <= 0) throw Error("resize: the target size must be positive");
  // PIL skips a pass whose axis keeps its length (that pass would be the identity anyway).
  RgbImage result = image;
  if (width != image.width) result = resample_pass(result, width, result.height, true);
  if (height != image.height) result = resample_pass(result, width, height, false);
  return result;
}

std::vector<float> tower_input(const RgbImage& image, int size, const PixelNorm& norm) {
  check_image(image, "tower_input");
  if (size <= 0) throw Error("tower_input: the size must be positive");
  const RgbImage resized = resize_bilinear(image, size, size);
  // transformers rescales in float64 by the double 1/255 from preprocessor_config.json; the float
  // PixelNorm holds cannot carry that double, so the usual factor is recognized and restored.
  const double rescale = norm.rescale == 1.0f / 255.0f ? 1.0 / 255.0 : double(norm.rescale);
  std::vector<float> out(size_t(3) * size * size);  // [3][size][size]
  const size_t plane = size_t(size) * size;
  for (size_t i = 0; i < plane; ++i) {
    for (int c = 0; c < 3; ++c) {
      const float scaled = float(double(resized.pixels[i * 3 + c]) * rescale);
      out[c * plane + i] = (scaled - norm.mean[c]) / norm.std[c];
    }
  }
  return out;
}

}  // namespace kiln
