// What SHA-1 and SHA-256 (FIPS 180-4, section 5.1.1) end alike: the message padded with a 1 bit,
// zeros up to 56 bytes mod 64 and its length in bits (big-endian), then the state words in hex.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace kiln {

// Feeds the padding to h, whose message so far is total_bytes long.
template <typename Hash>
void md_pad(Hash& h, uint64_t total_bytes) {
  uint8_t tail[1 + 63 + 8] = {0x80};
  const size_t zeros = size_t((119 - total_bytes % 64) % 64);  // (total + 1 + zeros) % 64 == 56
  for (int i = 0; i < 8; ++i) tail[1 + zeros + i] = uint8_t((total_bytes * 8) >> (56 - 8 * i));
  h.update(tail, 1 + zeros + 8);
}

// Lower-case hex of 32-bit words, each big-endian.
template <typename Words>
std::string hex_words(const Words& words) {
  std::string hex;
  char buf[9];
  for (uint32_t word : words) {
    std::snprintf(buf, sizeof buf, "%08x", word);
    hex += buf;
  }
  return hex;
}

}  // namespace kiln
