// decode_image: the format comes from the first bytes (a renamed file still decodes), then the
// format's decoder, then the Exif orientation, as transformers' load_image applies it with PIL.
#include <cstring>

#include "image/codecs.h"
#include "image/exif_orientation.h"

namespace kiln {
namespace image_detail {

void check_dimensions(uint64_t width, uint64_t height, const std::string& name, const ImageOptions& limits) {
  if (width == 0 || height == 0)
    throw Error(name + ": the image has zero size (" + std::to_string(width) + "x" + std::to_string(height) + ")");
  // Both factors fit in 32 bits in every format, so the product cannot overflow 64.
  const uint64_t pixels = width * height;
  if (pixels > limits.max_pixels)
    throw Error(name + ": the image is " + std::to_string(width) + "x" + std::to_string(height) + " = " +
                std::to_string(pixels) + " pixels, more than the limit of " + std::to_string(limits.max_pixels) +
                " pixels");
}

}  // namespace image_detail

namespace {

enum class Format { Png, Jpeg, Webp, Unknown };

Format sniff(std::string_view b) {
  auto starts = [&](size_t at, std::string_view magic) { return b.size() >= at + magic.size() && b.substr(at, magic.size()) == magic; };
  if (starts(0, "\x89PNG\r\n\x1a\n")) return Format::Png;
  if (starts(0, "\xff\xd8\xff")) return Format::Jpeg;
  if (starts(0, "RIFF") && starts(8, "WEBP")) return Format::Webp;
  return Format::Unknown;
}

// Formats people paste that Kiln does not read, named so the message says what the file is.
std::string what_else(std::string_view b) {
  auto starts = [&](std::string_view magic) { return b.substr(0, magic.size()) == magic; };
  if (starts("GIF87a") || starts("GIF89a")) return "a GIF image";
  if (starts("BM")) return "a BMP image";
  if (starts("II*") || starts("MM\0*")) return "a TIFF image";
  if (b.size() >= 12 && b.substr(4, 4) == "ftyp") return "an HEIF/AVIF image";
  return "not an image Kiln recognizes";
}

}  // namespace

RgbImage decode_image(std::string_view bytes, const std::string& name, const ImageOptions& limits) {
  if (bytes.empty()) throw Error(name + ": the file is empty");
  if (bytes.size() > limits.max_bytes)
    throw Error(name + ": the file is " + std::to_string(bytes.size()) + " bytes, more than the limit of " +
                std::to_string(limits.max_bytes) + " bytes");
  std::string exif;
  RgbImage image;
  switch (sniff(bytes)) {
    case Format::Png: image = image_detail::decode_png(bytes, name, limits, exif); break;
    case Format::Jpeg: image = image_detail::decode_jpeg(bytes, name, limits, exif); break;
    case Format::Webp: image = image_detail::decode_webp(bytes, name, limits, exif); break;
    case Format::Unknown:
      throw Error(name + ": " + what_else(bytes) + " (Kiln reads PNG, JPEG and WebP)");
  }
  // A broken Exif block is ignored, as PIL does: the pixels are still good.
  return apply_exif_orientation(std::move(image), exif_orientation(exif));
}

}  // namespace kiln
