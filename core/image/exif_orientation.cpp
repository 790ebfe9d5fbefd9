// Reads one tag of a TIFF header by hand: a whole Exif library for one 16-bit number is not worth
// its attack surface, and the block comes from untrusted files, so every offset is checked.
#include "image/exif_orientation.h"

#include <cstdint>

namespace kiln {
namespace {

class TiffReader {
 public:
  TiffReader(std::string_view data, bool big_endian) : data_(data), big_endian_(big_endian) {}
  bool has(uint64_t offset, uint64_t size) const { return offset <= data_.size() && size <= data_.size() - offset; }
  uint32_t u16(uint64_t at) const { return read(at, 2); }
  uint32_t u32(uint64_t at) const { return read(at, 4); }

 private:
  uint32_t read(uint64_t at, int n) const {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      const uint32_t byte = static_cast<uint8_t>(data_[at + (big_endian_ ? i : n - 1 - i)]);
      v = (v << 8) | byte;
    }
    return v;
  }
  std::string_view data_;
  bool big_endian_;
};

constexpr uint32_t kOrientationTag = 0x0112;
constexpr uint32_t kTypeShort = 3, kTypeLong = 4;

}  // namespace

int exif_orientation(std::string_view exif) {
  if (exif.substr(0, 6) == std::string_view("Exif\0\0", 6)) exif.remove_prefix(6);
  if (exif.size() < 8) return 1;
  bool big_endian;
  if (exif.substr(0, 4) == std::string_view("II*\0", 4)) big_endian = false;
  else if (exif.substr(0, 4) == std::string_view("MM\0*", 4)) big_endian = true;
  else return 1;
  const TiffReader tiff(exif, big_endian);
  const uint64_t ifd0 = tiff.u32(4);
  if (!tiff.has(ifd0, 2)) return 1;
  const uint32_t entries = tiff.u16(ifd0);
  for (uint32_t i = 0; i < entries; ++i) {
    const uint64_t entry = ifd0 + 2 + uint64_t(i) * 12;  // tag u16, type u16, count u32, value u32
    if (!tiff.has(entry, 12)) return 1;
    if (tiff.u16(entry) != kOrientationTag) continue;
    const uint32_t type = tiff.u16(entry + 2);
    if (tiff.u32(entry + 4) < 1) return 1;
    uint32_t value = 0;
    if (type == kTypeShort) value = tiff.u16(entry + 8);
    else if (type == kTypeLong) value = tiff.u32(entry + 8);
    else return 1;
    return value >= 1 && value <= 8 ? int(value) : 1;
  }
  return 1;
}

RgbImage apply_exif_orientation(RgbImage image, int orientation) {
  if (orientation < 2 || orientation > 8) return image;
  const int w = image.width, h = image.height;
  const bool swaps = orientation >= 5;  // 5..8 exchange width and height
  RgbImage out;
  out.width = swaps ? h : w;
  out.height = swaps ? w : h;
  out.pixels.resize(image.pixels.size());
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      int sx = x, sy = y;  // the source column and row of output pixel (x, y)
      switch (orientation) {
        case 2: sx = w - 1 - x; break;
        case 3: sx = w - 1 - x; sy = h - 1 - y; break;
        case 4: sy = h - 1 - y; break;
        case 5: sx = y; sy = x; break;
        case 6: sx = y; sy = h - 1 - x; break;
        case 7: sx = w - 1 - y; sy = h - 1 - x; break;
        case 8: sx = w - 1 - y; sy = x; break;
      }
      const uint8_t* src = &image.pixels[(size_t(sy) * w + sx) * 3];
      uint8_t* dst = &out.pixels[(size_t(y) * out.width + x) * 3];
      dst[0] = src[0], dst[1] = src[1], dst[2] = src[2];
    }
  }
  return out;
}

}  // namespace kiln
