// JPEG through libjpeg-turbo, the library PIL uses too (same IDCT and upsampling, so the same
// pixels). libjpeg's default error handler prints and exits; here errors longjmp back into small
// functions that hold no object with a destructor, and the caller's guard frees the decoder.
#include <cstdio>  // jpeglib.h needs FILE and size_t first

#include <jerror.h>
#include <jpeglib.h>

#include <csetjmp>
#include <cstring>
#include <vector>

#include "image/codecs.h"

namespace kiln::image_detail {
namespace {

// A progressive file may hold any number of scans, each a pass over the whole image: past this
// many it is an attack, not a photo (libjpeg-turbo's djpeg offers the same cut as -maxscans).
constexpr int kMaxScans = 1000;

struct JpegErrors {
  jpeg_error_mgr mgr;  // first, so a j_common_ptr's err is also a JpegErrors*
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void fail(j_common_ptr c) {
  auto* errors = reinterpret_cast<JpegErrors*>(c->err);
  (*c->err->format_message)(c, errors->message);
  std::longjmp(errors->jump, 1);
}

void on_error_exit(j_common_ptr c) { fail(c); }
void on_output_message(j_common_ptr) {}  // never print
// Warnings about bad data are read past, as PIL does, except the end of the data: PIL refuses a
// truncated file, where libjpeg would fill the rest with grey.
void on_emit_message(j_common_ptr c, int level) {
  if (level == -1 && c->err->msg_code == JWRN_JPEG_EOF) fail(c);
}
void on_progress(j_common_ptr c) {
  auto* d = reinterpret_cast<j_decompress_ptr>(c);
  if (d->input_scan_number > kMaxScans) {
    std::snprintf(reinterpret_cast<JpegErrors*>(c->err)->message, JMSG_LENGTH_MAX, "more than %d progressive scans", kMaxScans);
    std::longjmp(reinterpret_cast<JpegErrors*>(c->err)->jump, 1);
  }
}

bool read_header(jpeg_decompress_struct* d, JpegErrors* errors, const unsigned char* data, unsigned long size) {
  if (setjmp(errors->jump)) return false;
  jpeg_create_decompress(d);
  jpeg_mem_src(d, data, size);
  jpeg_save_markers(d, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header(d, TRUE);
  return true;
}

bool read_pixels(jpeg_decompress_struct* d, JpegErrors* errors, unsigned char* out, size_t row_bytes) {
  if (setjmp(errors->jump)) return false;
  jpeg_start_decompress(d);
  while (d->output_scanline < d->output_height) {
    JSAMPROW row = out + size_t(d->output_scanline) * row_bytes;
    jpeg_read_scanlines(d, &row, 1);
  }
  return true;
}

struct DecompressGuard {
  jpeg_decompress_struct* d;
  bool created = false;
  ~DecompressGuard() {
    if (created) jpeg_destroy_decompress(d);
  }
};

// PIL's CMYK -> RGB (Convert.c cmyk2rgb) on Adobe's inverted CMYK, which PIL assumes for every
// CMYK JPEG: r = 255-k' - (255-k') * c' / 255 with c' = 255 - stored c and k' = 255 - stored k.
uint8_t cmyk_channel(int stored_c, int stored_k) {
  const int nk = stored_k;             // 255 - (255 - stored k)
  const int c = 255 - stored_c;
  int t = c * nk + 128;
  const int product = ((t >> 8) + t) >> 8;  // c * nk / 255, rounded as PIL's MULDIV255
  t = nk - product;
  return uint8_t(t < 0 ? 0 : t > 255 ? 255 : t);
}

}  // namespace

RgbImage decode_jpeg(std::string_view bytes, const std::string& name, const ImageOptions& limits, std::string& exif) {
  jpeg_decompress_struct d{};
  JpegErrors errors{};
  d.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = on_error_exit;
  errors.mgr.output_message = on_output_message;
  errors.mgr.emit_message = on_emit_message;
  jpeg_progress_mgr progress{};
  progress.progress_monitor = on_progress;
  // Destroying is safe even when jpeg_create_decompress failed: d is zeroed, so it has no memory.
  DecompressGuard guard{&d, true};
  if (!read_header(&d, &errors, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()))
    throw Error(name + ": corrupt JPEG: " + errors.message);
  d.progress = &progress;

  check_dimensions(d.image_width, d.image_height, name, limits);
  for (jpeg_saved_marker_ptr m = d.marker_list; m; m = m->next) {
    const std::string_view data(reinterpret_cast<const char*>(m->data), m->data_length);
    if (m->marker == JPEG_APP0 + 1 && data.substr(0, 5) == std::string_view("Exif\0", 5)) {
      exif.assign(data);
      break;  // PIL keeps the first Exif segment
    }
  }

  int components = 3;
  if (d.jpeg_color_space == JCS_GRAYSCALE) d.out_color_space = JCS_GRAYSCALE, components = 1;
  else if (d.jpeg_color_space == JCS_CMYK || d.jpeg_color_space == JCS_YCCK) d.out_color_space = JCS_CMYK, components = 4;
  else d.out_color_space = JCS_RGB;

  const size_t width = d.image_width, height = d.image_height;
  std::vector<uint8_t> decoded(width * height * components);
  if (!read_pixels(&d, &errors, decoded.data(), width * components))
    throw Error(name + ": corrupt JPEG: " + errors.message);
  if (d.output_width != width || d.output_height != height) throw Error(name + ": corrupt JPEG: unexpected output size");

  RgbImage image;
  image.width = int(width);
  image.height = int(height);
  if (components == 3) {
    image.pixels = std::move(decoded);
    return image;
  }
  image.pixels.resize(width * height * 3);
  for (size_t i = 0; i < width * height; ++i) {
    uint8_t* p = &image.pixels[i * 3];
    if (components == 1) {
      p[0] = p[1] = p[2] = decoded[i];
    } else {
      const uint8_t* s = &decoded[i * 4];
      for (int c = 0; c < 3; ++c) p[c] = cmyk_channel(s[c], s[3]);
    }
  }
  return image;
}

}  // namespace kiln::image_detail
