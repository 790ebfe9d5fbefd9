#include "common/printable.h"

#include <cstdio>

namespace kiln {

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&out](unsigned char byte) {
    char code[8];
    std::snprintf(code, sizeof code, "\\x%02X", byte);
    out += code;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7F) {
      escape(byte);
    } else if (byte == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      escape(static_cast<unsigned char>(text[++i]));  // U+0080..U+009F, the C1 controls (CSI is U+009B)
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace kiln
