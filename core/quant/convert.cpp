// Scalar conversions between float and the storage formats. These are the reference the matmul
// kernels are tested against; Q8_0 and Q4_0 follow ggml's reference quantizers step for step so
// that a row quantized here is byte-identical to the same row quantized by GGUF tools.
#include "quant/convert.h"

#include <bit>
#include <cmath>
#include <string>

#include "kiln/types.h"
#include "quant/block32_formats.h"
#include "quant/iq4_xs.h"
#include "quant/kquant_quantize.h"
#include "quant/kquants.h"

namespace kiln {

float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24 is exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, nan
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_fp16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // nan: keep the sign and top payload bits, force quiet
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  // 65520 is halfway between 65504 (odd mantissa) and 65536: ties go to even, i.e. to inf.
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t half;
  uint32_t dropped;  // the bits shifted out
  uint32_t halfway;  // value of `dropped` that is exactly half an ulp
  if (magnitude >= 0x38800000u) {  // normal in fp16 (>= 2^-14): rebias exponent, keep 10 bits
    half = (magnitude - 0x38000000u) >> 13;
    dropped = magnitude & 0x1fffu;
    halfway = 0x1000u;
  } else {
    if (magnitude <= 0x33000000u) return sign;  // <= 2^-25 rounds to zero (2^-25 is a tie to even 0)
    // Subnormal: value / 2^-24 with the implicit bit made explicit.
    const uint32_t exponent = magnitude >> 23;          // 102..112
    const uint32_t shift = 126 - exponent;              // 14..24
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    half = mantissa >> shift;
    dropped = mantissa & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  }
  // Round to nearest, ties to even; a carry into the exponent field is the correct next value.
  if (dropped > halfway || (dropped == halfway && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet nan
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);  // ties to even; overflow rounds to inf
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

namespace {

void require_whole_blocks(const char* what, DType type, int64_t n) {
  const int64_t block = block_weights(type);
  if (n < 0 || n % block != 0) {
    throw Error(std::string(what) + ": " + std::to_string(n) + " values are not a whole number of " +
                std::to_string(block) + "-value blocks of " + to_string(type));
  }
}

// ggml's quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d) using the fp32 reciprocal.
void quantize_q8_0(const float* src, int64_t n, BlockQ8_0* dst) {
  for (int64_t b = 0; b < n / kBlockSize; ++b) {
    const float* x = src + b * kBlockSize;
    float amax = 0.0f;
    for (int j = 0; j < kBlockSize; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = float_to_fp16(d);
    for (int j = 0; j < kBlockSize; ++j) {
      const float q = std::round(x[j] * id);
      // Only a nan (or inf) input can leave [-127, 127]; clamp so the cast is always defined.
      dst[b].qs[j] = static_cast<int8_t>(q >= -127.0f ? (q <= 127.0f ? q : 127.0f) : (q < 0 ? -127.0f : 0.0f));
    }
  }
}

// ggml's quantize_row_q4_0_ref: the first element of largest magnitude, with its sign, maps to
// q = 0, so d = max / -8; q = min(15, trunc(x / d + 8.5)).
void quantize_q4_0(const float* src, int64_t n, BlockQ4_0* dst) {
  constexpr int kHalf = kBlockSize / 2;
  for (int64_t b = 0; b < n / kBlockSize; ++b) {
    const float* x = src + b * kBlockSize;
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < kBlockSize; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = float_to_fp16(d);
    auto level = [id](float v) -> uint8_t {
      const float shifted = v * id + 8.5f;                  // in [0.5, 16.5] for finite input
      if (!(shifted >= 0.0f)) return 0;                     // nan
      return shifted >= 15.0f ? 15 : static_cast<uint8_t>(shifted);  // truncation, as ggml's cast
    };
    for (int j = 0; j < kHalf; ++j) {
      dst[b].qs[j] = static_cast<uint8_t>(level(x[j]) | (level(x[j + kHalf]) << 4));
    }
  }
}

void dequantize_q8_0(const BlockQ8_0* src, int64_t n, float* dst) {
  for (int64_t b = 0; b < n / kBlockSize; ++b) {
    const float d = fp16_to_float(src[b].d);
    for (int j = 0; j < kBlockSize; ++j) dst[b * kBlockSize + j] = d * static_cast<float>(src[b].qs[j]);
  }
}

void dequantize_q4_0(const BlockQ4_0* src, int64_t n, float* dst) {
  constexpr int kHalf = kBlockSize / 2;
  for (int64_t b = 0; b < n / kBlockSize; ++b) {
    const float d = fp16_to_float(src[b].d);
    float* y = dst + b * kBlockSize;
    for (int j = 0; j < kHalf; ++j) {
      y[j] = d * static_cast<float>((src[b].qs[j] & 0x0f) - 8);
      y[j + kHalf] = d * static_cast<float>((src[b].qs[j] >> 4) - 8);
    }
  }
}

}  // namespace

void quantize_row(DType type, const float* src, int64_t n, void* dst) {
  require_whole_blocks("quantize_row", type, n);
  switch (type) {
    case DType::F32: {
      auto* out = static_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = src[i];
      return;
    }
    case DType::F16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = float_to_fp16(src[i]);
      return;
    }
    case DType::BF16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = float_to_bf16(src[i]);
      return;
    }
    case DType::Q8_0: quantize_q8_0(src, n, static_cast<BlockQ8_0*>(dst)); return;
    case DType::Q4_0: quantize_q4_0(src, n, static_cast<BlockQ4_0*>(dst)); return;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: quantize_row_kquant(type, src, n, dst); return;
    case DType::Q5_0: quantize_row_block32(type, src, n, dst); return;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_1:
    case DType::Q5_1:
    case DType::IQ4_NL:
    case DType::IQ4_XS: break;
  }
  throw Error(std::string("quantize_row: ") + to_string(type) +
              " is a load-only format (read from GGUF files; of the K-quants Kiln writes Q4_K, Q5_K and Q6_K, "
              "of the other 32-weight formats Q5_0)");
}

void dequantize_row(DType type, const void* src, int64_t n, float* dst) {
  require_whole_blocks("dequantize_row", type, n);
  switch (type) {
    case DType::F32: {
      const auto* in = static_cast<const float*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = in[i];
      return;
    }
    case DType::F16: {
      const auto* in = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_float(in[i]);
      return;
    }
    case DType::BF16: {
      const auto* in = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(in[i]);
      return;
    }
    case DType::Q8_0: dequantize_q8_0(static_cast<const BlockQ8_0*>(src), n, dst); return;
    case DType::Q4_0: dequantize_q4_0(static_cast<const BlockQ4_0*>(src), n, dst); return;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q2_K:
    case DType::Q3_K: dequantize_row_kquant(type, src, n, dst); return;
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL: dequantize_row_block32(type, src, n, dst); return;
    case DType::IQ4_XS: dequantize_row_iq4_xs(src, n, dst); return;
  }
  throw Error("dequantize_row: unknown storage type " + std::to_string(static_cast<int>(type)));
}

DType storage_type_for(DType wanted, int64_t cols) {
  switch (wanted) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL: return cols % kBlockSize == 0 ? wanted : DType::F16;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::IQ4_XS: return cols % kSuperBlockSize == 0 ? wanted : DType::F16;
    default: return wanted;
  }
}

}  // namespace kiln
