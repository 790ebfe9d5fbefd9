// WebP through libwebp: the header (WebPGetFeatures) first, for the size check, then the pixels
// straight into the RgbImage. Alpha is decoded away (RGB output keeps the colour as stored), as
// PIL's convert("RGB") drops it.
#include <webp/decode.h>

#include "image/codecs.h"

namespace kiln::image_detail {
namespace {

uint32_t little_endian_u32(std::string_view b, size_t at) {
  return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8 | uint32_t(uint8_t(b[at + 2])) << 16 |
         uint32_t(uint8_t(b[at + 3])) << 24;
}

// The EXIF chunk of an extended (VP8X) file, found by walking the RIFF chunks: fourcc, 32-bit
// little-endian size, data padded to an even length. Empty when absent or when a size lies.
std::string_view exif_chunk(std::string_view b) {
  size_t at = 12;  // "RIFF" size "WEBP"
  while (at + 8 <= b.size()) {
    const uint64_t size = little_endian_u32(b, at + 4);
    if (size > b.size() - at - 8) return {};
    if (b.substr(at, 4) == "EXIF") return b.substr(at + 8, size);
    at += 8 + size + (size & 1);
  }
  return {};
}

std::string describe(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the file ends early (truncated)";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "a feature libwebp does not support";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    default: return "the data is invalid";
  }
}

}  // namespace

RgbImage decode_webp(std::string_view bytes, const std::string& name, const ImageOptions& limits, std::string& exif) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(data, bytes.size(), &features);
  if (status != VP8_STATUS_OK) throw Error(name + ": corrupt WebP: " + describe(status));
  check_dimensions(uint64_t(features.width < 0 ? 0 : features.width), uint64_t(features.height < 0 ? 0 : features.height),
                   name, limits);
  if (features.has_animation) throw Error(name + ": animated WebP images are not supported");

  RgbImage image;
  image.width = features.width;
  image.height = features.height;
  image.pixels.resize(size_t(image.width) * image.height * 3);
  if (!WebPDecodeRGBInto(data, bytes.size(), image.pixels.data(), image.pixels.size(), image.width * 3))
    throw Error(name + ": corrupt WebP: the image data is invalid or truncated");
  exif.assign(exif_chunk(bytes));
  return image;
}

}  // namespace kiln::image_detail
