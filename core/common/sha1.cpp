// SHA-1 written from FIPS 180-4 section 6.1; git's blob id on top.
#include "common/sha1.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/md_ending.h"

namespace kiln {
namespace {

constexpr uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

}  // namespace

Sha1::Sha1() : state_{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0} {}

void Sha1::compress(const uint8_t* block) {
  uint32_t w[80];
  for (int t = 0; t < 16; ++t)
    w[t] = uint32_t(block[4 * t]) << 24 | uint32_t(block[4 * t + 1]) << 16 | uint32_t(block[4 * t + 2]) << 8 |
           uint32_t(block[4 * t + 3]);
  for (int t = 16; t < 80; ++t) w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3], e = state_[4];
  for (int t = 0; t < 80; ++t) {
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    const uint32_t tmp = rotl(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = tmp;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
}

void Sha1::update(const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_bytes_ += bytes;
  while (bytes > 0) {
    const size_t n = std::min(bytes, size_t(64) - buffered_);
    std::memcpy(buffer_ + buffered_, p, n);
    buffered_ += n;
    p += n;
    bytes -= n;
    if (buffered_ == 64) {
      compress(buffer_);
      buffered_ = 0;
    }
  }
}

std::string Sha1::hex_digest() {
  md_pad(*this, total_bytes_);
  return hex_words(state_);
}

Sha1 git_blob_hasher(uint64_t size) {
  Sha1 h;
  const std::string header = "blob " + std::to_string(size);
  h.update(header.c_str(), header.size() + 1);  // the terminating '\0' is part of git's header
  return h;
}

}  // namespace kiln
