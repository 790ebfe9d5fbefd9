// PNG through libpng. libpng reports errors by calling a function that must not return, so each
// step that can fail runs in a small function holding the setjmp and no object with a destructor
// (longjmp must not skip one); the C++ around them owns the memory, so no error path leaks.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "image/codecs.h"

namespace kiln::image_detail {
namespace {

struct PngSource {
  const unsigned char* data;
  size_t size;
  size_t pos;
  char message[256];
};

void on_error(png_structp png, png_const_charp text) {
  auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(source->message, sizeof source->message, "%s", text);
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}  // PIL reads past libpng's warnings too

void on_read(png_structp png, png_bytep out, size_t n) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > source->size - source->pos) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, source->data + source->pos, n);
  source->pos += n;
}

// Reads the chunks before the pixels and sets the transformations to 8-bit RGB(A): 16-bit samples
// keep their high byte and grey levels below 8 bits are scaled, as PIL's unpackers do.
bool read_header(png_structp png, png_infop info, int* channels) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  const int color = png_get_color_type(png, info);
  const int depth = png_get_bit_depth(png, info);
  if (depth == 16) png_set_strip_16(png);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if ((color & PNG_COLOR_MASK_COLOR) == 0) {
    if (depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    png_set_gray_to_rgb(png);
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  *channels = png_get_channels(png, info);
  return true;
}

bool read_rows(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_image(png, rows);
  return true;
}

struct PngHandles {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngHandles() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

uint32_t big_endian_u32(std::string_view b, size_t at) {
  return uint32_t(uint8_t(b[at])) << 24 | uint32_t(uint8_t(b[at + 1])) << 16 | uint32_t(uint8_t(b[at + 2])) << 8 |
         uint32_t(uint8_t(b[at + 3]));
}

}  // namespace

RgbImage decode_png(std::string_view bytes, const std::string& name, const ImageOptions& limits, std::string& exif) {
  // The size comes from IHDR (right after the signature) before libpng allocates anything, so a
  // bomb is refused in microseconds.
  if (bytes.size() < 8 + 8 + 13) throw Error(name + ": the PNG file ends early (truncated)");
  if (bytes.substr(12, 4) != "IHDR") throw Error(name + ": corrupt PNG: it does not start with an IHDR chunk");
  check_dimensions(big_endian_u32(bytes, 16), big_endian_u32(bytes, 20), name, limits);

  PngSource source{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, {}};
  PngHandles h;
  h.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, on_error, on_warning);
  if (!h.png) throw Error(name + ": out of memory for the PNG decoder");
  h.info = png_create_info_struct(h.png);
  if (!h.info) throw Error(name + ": out of memory for the PNG decoder");
  png_set_read_fn(h.png, &source, on_read);

  int channels = 0;
  if (!read_header(h.png, h.info, &channels)) throw Error(name + ": corrupt PNG: " + source.message);
  const uint32_t width = png_get_image_width(h.png, h.info), height = png_get_image_height(h.png, h.info);
  if (channels != 3 && channels != 4) throw Error(name + ": unsupported PNG layout");
#ifdef PNG_eXIf_SUPPORTED
  png_bytep exif_data = nullptr;
  png_uint_32 exif_size = 0;
  if (png_get_eXIf_1(h.png, h.info, &exif_size, &exif_data) && exif_data) exif.assign(reinterpret_cast<const char*>(exif_data), exif_size);
#endif

  // Alpha (an alpha channel or tRNS) is read and then dropped: PIL's convert("RGB") keeps the
  // colour samples as stored, whatever their transparency.
  const size_t row_bytes = size_t(width) * channels;
  std::vector<uint8_t> decoded(row_bytes * height);
  std::vector<png_bytep> rows(height);
  for (uint32_t y = 0; y < height; ++y) rows[y] = decoded.data() + y * row_bytes;
  if (!read_rows(h.png, rows.data())) throw Error(name + ": corrupt PNG: " + source.message);

  RgbImage image;
  image.width = int(width);
  image.height = int(height);
  if (channels == 3) {
    image.pixels = std::move(decoded);
  } else {
    image.pixels.resize(size_t(width) * height * 3);
    for (size_t i = 0, n = size_t(width) * height; i < n; ++i) std::memcpy(&image.pixels[i * 3], &decoded[i * 4], 3);
  }
  return image;
}

}  // namespace kiln::image_detail
