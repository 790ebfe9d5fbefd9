#include "common/base64.h"

#include <array>
#include <cstdint>

namespace kiln {

namespace {
constexpr const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string encode_base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

bool decode_base64(std::string_view text, std::string& out) {
  static const std::array<int8_t, 256> value = [] {
    std::array<int8_t, 256> v{};
    v.fill(-1);
    for (int i = 0; i < 64; ++i) v[uint8_t(kAlphabet[i])] = int8_t(i);
    return v;
  }();
  out.clear();
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int held = 0, padding = 0;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '=') { ++padding; continue; }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (padding > 0 || value[c] < 0) return false;  // data after padding, or not base64
    bits = (bits << 6) | uint32_t(value[c]);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(char((bits >> held) & 0xff));
    }
  }
  // Leftover bits form no whole byte; a single leftover character (6 bits) means a cut-off text.
  return held < 6 && padding <= 2;
}

std::string image_mime_type(std::string_view b) {
  if (b.size() >= 8 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) return "image/png";
  if (b.size() >= 3 && uint8_t(b[0]) == 0xFF && uint8_t(b[1]) == 0xD8 && uint8_t(b[2]) == 0xFF) return "image/jpeg";
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") return "image/webp";
  return "";
}

}  // namespace kiln
