// Pictures as the vision tower sees them: decoded from the file's bytes, turned upright, and
// resized and normalized the way transformers' Gemma3ImageProcessor does it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/types.h"

namespace kiln {

struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // [height][width][3], 8-bit RGB
};

// Decodes a PNG, JPEG or WebP file held in memory (the format from its first bytes), turned upright
// by its Exif orientation (as transformers' load_image does with PIL's exif_transpose). Alpha is
// dropped, the colour samples kept as stored, not composited (transformers' convert_to_rgb is PIL's
// convert("RGB"), which does that); grey, palette and CMYK become RGB, 16-bit samples keep their
// high byte (PIL clips 16-bit grey to 0..255 instead, a quirk not copied). Throws kiln::Error
// "NAME: problem" for an unknown format, corrupt or truncated data, a zero-size image, a file larger
// than limits.max_bytes or an image of more than limits.max_pixels pixels (checked from the header,
// before any pixel is decoded).
RgbImage decode_image(std::string_view bytes, const std::string& name, const ImageOptions& limits);

// The tower's pixel normalization: (v * rescale - mean[c]) / std[c].
struct PixelNorm {
  std::array<float, 3> mean{0.5f, 0.5f, 0.5f};
  std::array<float, 3> std{0.5f, 0.5f, 0.5f};
  float rescale = 1.0f / 255.0f;
};

// PIL's Image.resize((width, height), BILINEAR) on 8-bit RGB, to the bit: antialiased when
// shrinking, each pass rounded to 8 bits.
RgbImage resize_bilinear(const RgbImage& image, int width, int height);

// The tower's input: the image resized to size x size with PIL's bilinear filter (antialiased when
// shrinking, 8-bit result, as transformers gets it from PIL), then normalized. [3][size][size].
std::vector<float> tower_input(const RgbImage& image, int size, const PixelNorm& norm);

// Gemma 3's pan-and-scan: crops of a large or elongated image (transformers' defaults: crops of at
// least 256 pixels, at most 4 of them, only when the long side is 1.2 times the short one or more).
// Empty when the image gets none. The caller feeds the whole image first, then each crop.
struct PanAndScan {
  int min_crop_size = 256;
  int max_crops = 4;
  float min_ratio = 1.2f;
};
std::vector<RgbImage> pan_and_scan_crops(const RgbImage& image, const PanAndScan& options = {});

}  // namespace kiln
