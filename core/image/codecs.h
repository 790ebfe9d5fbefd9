// The per-format decoders behind decode_image (image_decode.cpp picks one from the magic bytes).
// Each turns its format's bytes into 8-bit RGB the way PIL's open + convert("RGB") does, and
// checks the size the header declares (check_dimensions) before it allocates or decodes a pixel.
// Failures throw kiln::Error "NAME: problem"; the codec libraries never print or abort.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace kiln::image_detail {

// Throws for a zero-size image or one of more than limits.max_pixels pixels.
void check_dimensions(uint64_t width, uint64_t height, const std::string& name, const ImageOptions& limits);

// `exif` receives the file's Exif block (a TIFF structure, possibly behind "Exif\0\0") when the
// file carries one, for the orientation; it is left empty otherwise.
RgbImage decode_png(std::string_view bytes, const std::string& name, const ImageOptions& limits, std::string& exif);
RgbImage decode_jpeg(std::string_view bytes, const std::string& name, const ImageOptions& limits, std::string& exif);
RgbImage decode_webp(std::string_view bytes, const std::string& name, const ImageOptions& limits, std::string& exif);

}  // namespace kiln::image_detail
