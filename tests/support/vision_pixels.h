// The vision fixture's image as the tower takes it, without an image decoder: tests/data/vision's
// exact.rgb (exact.png decoded once: 64 x 64 pixels, R G B bytes, rows top to bottom), normalized.
#pragma once

#include <cstdint>
#include <vector>

#include "test_files.h"
#include "vision/vision_encoder.h"

namespace kiln::test {

// [3][size][size]: (v * rescale - mean[c]) / std[c], as tower_input writes it.
inline std::vector<float> exact_pixels(const VisionConfig& c) {
  const QByteArray rgb = read_file(QStringLiteral(KILN_TEST_DATA "/vision/exact.rgb"));
  const int size = c.image_size;
  if (rgb.size() != 3 * size * size) qFatal("exact.rgb does not hold %d x %d pixels", size, size);
  std::vector<float> pixels(3 * size_t(size) * size);
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x)
      for (int ch = 0; ch < 3; ++ch) {
        const float v = static_cast<uint8_t>(rgb[(y * size + x) * 3 + ch]);
        pixels[(ch * size + y) * size + x] = (v * c.norm.rescale - c.norm.mean[ch]) / c.norm.std[ch];
      }
  return pixels;
}

}  // namespace kiln::test
