#include "runtime/vulkan/kquant_layout.h"

#include <cstring>

#include "kiln/types.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"

namespace kiln::vk {
namespace {

uint32_t scale_words(DType type) {
  switch (type) {
    case DType::Q4_K: return 4;
    case DType::Q5_K: return 12;
    case DType::Q6_K: return 21;
    case DType::Q3_K: return 12;
    case DType::Q2_K: return 5;
    case DType::IQ4_XS: return 2;
    default: throw Error(std::string("Vulkan: no GPU layout for ") + to_string(type));
  }
}

// The 256 quants of a super-block in weight order (the layouts of quant/kquant_blocks.h).
void q4k_quants(const BlockQ4K& b, uint8_t* q) {
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = b.qs[32 * c + l] & 15;
      q[64 * c + 32 + l] = b.qs[32 * c + l] >> 4;
    }
}

void q5k_quants(const BlockQ5K& b, uint8_t* q) {
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = b.qs[32 * c + l] & 15;
      q[64 * c + 32 + l] = b.qs[32 * c + l] >> 4;
    }
  for (int i = 0; i < kSuperBlockSize; ++i) q[i] |= ((b.qh[i % 32] >> (i / 32)) & 1) << 4;
}

void q6k_quants(const BlockQ6K& b, uint8_t* q) {
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const int h = i / 128, j = (i / 32) % 4, l = i % 32;
    const int low = (b.ql[64 * h + 32 * (j % 2) + l] >> (j < 2 ? 0 : 4)) & 15;
    const int high = (b.qh[32 * h + l] >> (2 * j)) & 3;
    q[i] = uint8_t(low | (high << 4));
  }
}

// Q2_K, Q3_K: bits 0-1 of weight i = 128 h + 32 j + l in bits 2j of qs[32 h + l]; Q3_K's bit 2 is
// bit i / 32 of hmask[l] (set: + 4 to the quant as stored here, whose offset is then 4).
void q2bit_quants(const uint8_t* qs, const uint8_t* hmask, uint8_t* q) {
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const int h = i / 128, j = (i / 32) % 4, l = i % 32;
    q[i] = uint8_t((qs[32 * h + l] >> (2 * j)) & 3);
    if (hmask) q[i] |= uint8_t(((hmask[l] >> (i / 32)) & 1) << 2);
  }
}

// A block's 32 quants as two words of 2-bit fields: q[j] at bits 2 (j % 16) of word j / 16.
void pack_2bit(const uint8_t* q, uint8_t* out) {
  uint32_t w[2] = {0, 0};
  for (int j = 0; j < 32; ++j) w[j / 16] |= uint32_t(q[j] & 3) << (2 * (j % 16));
  std::memcpy(out, w, 8);
}

// A block's 32 quants: their low nibbles in Q4_0's order.
void pack_nibbles(const uint8_t* q, uint8_t* out) {
  for (int j = 0; j < 16; ++j) out[j] = uint8_t((q[j] & 15) | ((q[j + 16] & 15) << 4));
}

}  // namespace

bool gpu_kquant(DType type) {
  return type == DType::Q4_K || type == DType::Q5_K || type == DType::Q6_K || type == DType::Q3_K || type == DType::Q2_K ||
         type == DType::IQ4_XS;
}

bool two_bit_kquant(DType type) { return type == DType::Q3_K || type == DType::Q2_K; }

uint64_t kquant_scale_row_bytes(DType type, int64_t cols) {
  return uint64_t(cols / kSuperBlockSize) * scale_words(type) * 4;
}

void repack_kquant_row(DType type, int64_t cols, const uint8_t* src, uint8_t* weights, uint8_t* scales) {
  if (cols % kSuperBlockSize != 0)
    throw Error("Vulkan: a " + std::string(to_string(type)) + " row of " + std::to_string(cols) +
                " weights is not whole 256-weight super-blocks");
  const size_t in_bytes = type == DType::IQ4_XS ? sizeof(BlockIQ4_XS) : kquant_block_bytes(type);
  const uint32_t words = scale_words(type);
  uint8_t q[kSuperBlockSize];
  for (int64_t s = 0; s < cols / kSuperBlockSize; ++s) {
    const uint8_t* in = src + s * in_bytes;
    uint32_t w[21] = {};
    if (type == DType::IQ4_XS) {
      BlockIQ4_XS b;
      std::memcpy(&b, in, sizeof b);
      std::memcpy(weights + s * sizeof b.qs, b.qs, sizeof b.qs);  // 8 blocks of 16 nibble bytes, as Q4_0's
      w[0] = uint32_t(b.d) | (uint32_t(b.scales_h) << 16);
      std::memcpy(&w[1], b.scales_l, 4);
      std::memcpy(scales + s * words * 4, w, words * 4);
      continue;
    }
    if (type == DType::Q3_K) {
      BlockQ3K b;
      std::memcpy(&b, in, sizeof b);
      q2bit_quants(b.qs, b.hmask, q);
      for (int i = 0; i < kSuperBlockSize; ++i) w[i / 32] |= uint32_t((q[i] >> 2) & 1) << (i % 32);
      std::memcpy(&w[8], b.scales, 12);
      w[11] = b.d;
    } else if (type == DType::Q2_K) {
      BlockQ2K b;
      std::memcpy(&b, in, sizeof b);
      q2bit_quants(b.qs, nullptr, q);
      std::memcpy(&w[0], b.scales, 16);
      w[4] = uint32_t(b.d) | (uint32_t(b.dmin) << 16);
    } else if (type == DType::Q6_K) {
      BlockQ6K b;  // copied: GGUF rows need not be aligned
      std::memcpy(&b, in, sizeof b);
      q6k_quants(b, q);
      for (int i = 0; i < kSuperBlockSize; ++i) w[i / 16] |= uint32_t(q[i] >> 4) << (2 * (i % 16));
      std::memcpy(&w[16], b.scales, 16);
      w[20] = b.d;
    } else {
      BlockQ5K b5{};
      if (type == DType::Q5_K) {
        std::memcpy(&b5, in, sizeof b5);
        q5k_quants(b5, q);
        for (int i = 0; i < kSuperBlockSize; ++i) w[4 + i / 32] |= uint32_t((q[i] >> 4) & 1) << (i % 32);
      } else {
        BlockQ4K b4;
        std::memcpy(&b4, in, sizeof b4);
        q4k_quants(b4, q);
        b5.d = b4.d;
        b5.dmin = b4.dmin;
        std::memcpy(b5.scales, b4.scales, 12);
      }
      w[0] = uint32_t(b5.d) | (uint32_t(b5.dmin) << 16);
      std::memcpy(&w[1], b5.scales, 12);
    }
    for (int b = 0; b < 8; ++b) {
      if (two_bit_kquant(type)) pack_2bit(q + 32 * b, weights + (s * 8 + b) * 8);
      else pack_nibbles(q + 32 * b, weights + (s * 8 + b) * 16);
    }
    std::memcpy(scales + s * words * 4, w, words * 4);
  }
}

}  // namespace kiln::vk
