// Gemma 3's pan-and-scan, the rule of transformers' Gemma3ImageProcessor.pan_and_scan
// (src/transformers/models/gemma3/image_processing_gemma3.py): along the long side, about
// long/short crops (half rounded up), no more than long / min_crop_size, then clamped to
// [2, max_crops]; each crop is ceil(long / count) long and the whole short side wide; none when
// the ratio is under min_ratio or a crop would be shorter than min_crop_size. The last crop is
// cut off at the image's edge, as numpy slicing does.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "image/image.h"

namespace kiln {

std::vector<RgbImage> pan_and_scan_crops(const RgbImage& image, const PanAndScan& options) {
  const int w = image.width, h = image.height;
  if (w <= 0 || h <= 0 || options.min_crop_size <= 0) return {};
  // transformers compares with the double 1.2; the float here is 1.2000000477, which would turn
  // an exact 6:5 picture away. Seven significant digits give back the decimal the user wrote.
  const double min_ratio = std::round(double(options.min_ratio) * 1e6) / 1e6;
  const bool landscape = w >= h;
  const int long_side = landscape ? w : h, short_side = landscape ? h : w;
  if (double(long_side) / short_side < min_ratio) return {};
  int count = int(std::floor(double(long_side) / short_side + 0.5));
  count = std::min(long_side / options.min_crop_size, count);
  count = std::min(options.max_crops, std::max(2, count));
  if (count < 1) return {};
  const int crops_w = landscape ? count : 1, crops_h = landscape ? 1 : count;
  const int crop_w = (w + crops_w - 1) / crops_w, crop_h = (h + crops_h - 1) / crops_h;
  if (std::min(crop_w, crop_h) < options.min_crop_size) return {};

  std::vector<RgbImage> crops;
  for (int i = 0; i < crops_h; ++i) {
    for (int j = 0; j < crops_w; ++j) {
      const int x0 = crop_w * j, y0 = crop_h * i;
      RgbImage crop;
      crop.width = std::min(crop_w, w - x0);
      crop.height = std::min(crop_h, h - y0);
      if (crop.width <= 0 || crop.height <= 0) continue;
      crop.pixels.resize(size_t(crop.width) * crop.height * 3);
      for (int y = 0; y < crop.height; ++y)
        std::memcpy(&crop.pixels[size_t(y) * crop.width * 3], &image.pixels[(size_t(y0 + y) * w + x0) * 3],
                    size_t(crop.width) * 3);
      crops.push_back(std::move(crop));
    }
  }
  return crops;
}

}  // namespace kiln
