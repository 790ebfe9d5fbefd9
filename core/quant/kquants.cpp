// Dequantization of GGUF's K-quants, written from the block layouts of the GGUF format.
//
// The loader holds K-quant tensors as stored (the CPU and Vulkan kernels read them directly); these
// serve the references, embedding rows, conversions asked for with --precision and kiln quantize.
//
// The block layouts are documented in quant/kquant_blocks.h.
#include "quant/kquants.h"

#include <cstring>

#include "kiln/types.h"
#include "quant/convert.h"
#include "quant/kquant_blocks.h"

namespace kiln {
namespace {

// The 12 scale bytes of Q4_K / Q5_K pack eight 6-bit scales and eight 6-bit mins: sub-blocks
// 0-3 keep theirs in the low 6 bits of bytes 0-3 (scale) and 4-7 (min); sub-blocks 4-7 keep the
// low 4 bits in bytes 8-11 (scale low nibble, min high nibble) and the top 2 bits in the top 2
// bits of bytes 0-3 (scale) and 4-7 (min).
void unpack_scale_min(const uint8_t* s, int sub, uint8_t& scale, uint8_t& min) {
  if (sub < 4) {
    scale = s[sub] & 63;
    min = s[sub + 4] & 63;
  } else {
    scale = static_cast<uint8_t>((s[sub + 4] & 0x0F) | ((s[sub - 4] >> 6) << 4));
    min = static_cast<uint8_t>((s[sub + 4] >> 4) | ((s[sub] >> 6) << 4));
  }
}

void dequantize_q2k(const BlockQ2K& b, float* y) {
  const float d = fp16_to_float(b.d), dmin = fp16_to_float(b.dmin);
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const int h = i / 128, j = (i / 32) % 4, l = i % 32, s = i / 16;
    const int q = (b.qs[32 * h + l] >> (2 * j)) & 3;
    y[i] = d * float(b.scales[s] & 15) * float(q) - dmin * float(b.scales[s] >> 4);
  }
}

void dequantize_q3k(const BlockQ3K& b, float* y) {
  const float d = fp16_to_float(b.d);
  int scale[16];
  for (int s = 0; s < 16; ++s) {
    const int low = s < 8 ? b.scales[s] & 15 : b.scales[s - 8] >> 4;
    const int high = (b.scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    scale[s] = (low | (high << 4)) - 32;
  }
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const int h = i / 128, j = (i / 32) % 4, l = i % 32;
    const int q = (b.qs[32 * h + l] >> (2 * j)) & 3;
    const bool high_bit = (b.hmask[l] >> (i / 32)) & 1;
    y[i] = d * float(scale[i / 16]) * float(q - (high_bit ? 0 : 4));
  }
}

void dequantize_q4k(const BlockQ4K& b, float* y) {
  const float d = fp16_to_float(b.d), dmin = fp16_to_float(b.dmin);
  for (int chunk = 0; chunk < 4; ++chunk) {  // 64 weights: sub-blocks 2c (low nibbles), 2c+1 (high)
    uint8_t sc0, m0, sc1, m1;
    unpack_scale_min(b.scales, 2 * chunk, sc0, m0);
    unpack_scale_min(b.scales, 2 * chunk + 1, sc1, m1);
    const uint8_t* q = b.qs + 32 * chunk;
    for (int l = 0; l < 32; ++l) {
      y[64 * chunk + l] = d * sc0 * (q[l] & 0x0F) - dmin * m0;
      y[64 * chunk + 32 + l] = d * sc1 * (q[l] >> 4) - dmin * m1;
    }
  }
}

void dequantize_q5k(const BlockQ5K& b, float* y) {
  const float d = fp16_to_float(b.d), dmin = fp16_to_float(b.dmin);
  for (int chunk = 0; chunk < 4; ++chunk) {
    uint8_t sc0, m0, sc1, m1;
    unpack_scale_min(b.scales, 2 * chunk, sc0, m0);
    unpack_scale_min(b.scales, 2 * chunk + 1, sc1, m1);
    const uint8_t* q = b.qs + 32 * chunk;
    const uint8_t bit0 = static_cast<uint8_t>(1u << (2 * chunk)), bit1 = static_cast<uint8_t>(2u << (2 * chunk));
    for (int l = 0; l < 32; ++l) {
      int lo = (q[l] & 0x0F) + ((b.qh[l] & bit0) ? 16 : 0);
      int hi = (q[l] >> 4) + ((b.qh[l] & bit1) ? 16 : 0);
      y[64 * chunk + l] = d * sc0 * lo - dmin * m0;
      y[64 * chunk + 32 + l] = d * sc1 * hi - dmin * m1;
    }
  }
}

void dequantize_q6k(const BlockQ6K& b, float* y) {
  const float d = fp16_to_float(b.d);
  for (int half = 0; half < 2; ++half) {  // 128 weights each
    const uint8_t* ql = b.ql + 64 * half;
    const uint8_t* qh = b.qh + 32 * half;
    const int8_t* sc = b.scales + 8 * half;
    float* out = y + 128 * half;
    for (int l = 0; l < 32; ++l) {
      const int s = l / 16;  // 16-weight sub-block within each group of 32
      int q0 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
      int q1 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
      int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      out[l] = d * sc[s] * q0;
      out[l + 32] = d * sc[s + 2] * q1;
      out[l + 64] = d * sc[s + 4] * q2;
      out[l + 96] = d * sc[s + 6] * q3;
    }
  }
}

template <typename Block>
void dequantize_blocks(const void* src, int64_t n, float* dst, void (*one)(const Block&, float*)) {
  const uint8_t* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n / kSuperBlockSize; ++i) {
    Block b;  // copied: rows inside a GGUF mapping need not be aligned for uint16_t reads
    std::memcpy(&b, p + i * sizeof(Block), sizeof(Block));
    one(b, dst + i * kSuperBlockSize);
  }
}

}  // namespace

bool is_kquant(DType t) {
  return t == DType::Q2_K || t == DType::Q3_K || t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}

size_t kquant_block_bytes(DType t) {
  switch (t) {
    case DType::Q2_K: return sizeof(BlockQ2K);
    case DType::Q3_K: return sizeof(BlockQ3K);
    case DType::Q4_K: return sizeof(BlockQ4K);
    case DType::Q5_K: return sizeof(BlockQ5K);
    case DType::Q6_K: return sizeof(BlockQ6K);
    default: throw Error(std::string("kquant_block_bytes: ") + to_string(t) + " is not a K-quant");
  }
}

void dequantize_row_kquant(DType t, const void* src, int64_t n, float* dst) {
  if (n % kSuperBlockSize != 0)
    throw Error("dequantize_row_kquant: " + std::to_string(n) + " weights is not a whole number of 256-weight super-blocks");
  switch (t) {
    case DType::Q2_K: dequantize_blocks<BlockQ2K>(src, n, dst, dequantize_q2k); break;
    case DType::Q3_K: dequantize_blocks<BlockQ3K>(src, n, dst, dequantize_q3k); break;
    case DType::Q4_K: dequantize_blocks<BlockQ4K>(src, n, dst, dequantize_q4k); break;
    case DType::Q5_K: dequantize_blocks<BlockQ5K>(src, n, dst, dequantize_q5k); break;
    case DType::Q6_K: dequantize_blocks<BlockQ6K>(src, n, dst, dequantize_q6k); break;
    default: throw Error(std::string("dequantize_row_kquant: ") + to_string(t) + " is not a K-quant");
  }
}

}  // namespace kiln
