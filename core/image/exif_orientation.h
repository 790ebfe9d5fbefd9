// The Exif orientation tag (0x0112) and turning a picture upright by it, as PIL's
// ImageOps.exif_transpose does (transformers' load_image calls it on every image it opens).
#pragma once

#include <string_view>

#include "image/image.h"

namespace kiln {

// The orientation (1..8) in an Exif block: a TIFF structure, with or without the "Exif\0\0" that
// JPEG's APP1 segment puts before it. 1 (upright) for an empty or malformed block, a missing tag or
// a value outside 1..8; every read is bounds-checked against the block.
int exif_orientation(std::string_view exif);

// The pixels turned so that orientation `orientation` becomes 1: 2 mirrors, 3 turns 180 degrees,
// 4 flips, 5 transposes, 6 turns clockwise, 7 transverses, 8 turns counter-clockwise.
RgbImage apply_exif_orientation(RgbImage image, int orientation);

}  // namespace kiln
