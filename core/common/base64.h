// Base64 (RFC 4648's standard alphabet) for images in data: URLs, and the MIME type an image's
// bytes announce (the server reads data URLs, the remote client writes them).
#pragma once

#include <string>
#include <string_view>

namespace kiln {

std::string encode_base64(std::string_view bytes);
// Padding optional, whitespace skipped; false on any other character or a cut-off text.
bool decode_base64(std::string_view text, std::string& out);

// "image/png", "image/jpeg" or "image/webp" from the file's first bytes; "" for anything else.
std::string image_mime_type(std::string_view bytes);

}  // namespace kiln
