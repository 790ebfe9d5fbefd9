// Names and sizes of the storage formats (see dtype.h for the layouts).
#include "quant/dtype.h"

#include <string>

#include "kiln/types.h"
#include "quant/block32_formats.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"

namespace kiln {

const char* to_string(DType t) {
  switch (t) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::Q8_0: return "Q8_0";
    case DType::Q4_0: return "Q4_0";
    case DType::Q4_K: return "Q4_K";
    case DType::Q5_K: return "Q5_K";
    case DType::Q6_K: return "Q6_K";
    case DType::Q2_K: return "Q2_K";
    case DType::Q3_K: return "Q3_K";
    case DType::Q4_1: return "Q4_1";
    case DType::Q5_0: return "Q5_0";
    case DType::Q5_1: return "Q5_1";
    case DType::IQ4_NL: return "IQ4_NL";
    case DType::IQ4_XS: return "IQ4_XS";
  }
  return "unknown";
}

bool is_block_quantized(DType t) {
  switch (t) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL:
    case DType::IQ4_XS: return true;
    default: return false;
  }
}

int64_t block_weights(DType t) {
  if (!is_block_quantized(t)) return 1;
  return is_kquant(t) || t == DType::IQ4_XS ? kSuperBlockSize : kBlockSize;
}

namespace {

// Throws when a row does not split into whole blocks: a caller that sized a buffer from a
// truncated row would otherwise read or write past it.
int64_t whole_blocks(DType t, int64_t cols, int64_t block) {
  if (cols < 0 || cols % block != 0) {
    throw Error(std::string("row of ") + std::to_string(cols) + " weights is not a whole number of " +
                std::to_string(block) + "-weight blocks for " + to_string(t));
  }
  return cols / block;
}

}  // namespace

size_t row_bytes(DType t, int64_t cols) {
  if (cols < 0) throw Error("negative row length " + std::to_string(cols));
  const auto n = static_cast<size_t>(cols);
  switch (t) {
    case DType::F32: return n * sizeof(float);
    case DType::F16:
    case DType::BF16: return n * sizeof(uint16_t);
    case DType::Q8_0: return static_cast<size_t>(whole_blocks(t, cols, kBlockSize)) * sizeof(BlockQ8_0);
    case DType::Q4_0: return static_cast<size_t>(whole_blocks(t, cols, kBlockSize)) * sizeof(BlockQ4_0);
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q2_K:
    case DType::Q3_K:
      return static_cast<size_t>(whole_blocks(t, cols, kSuperBlockSize)) * kquant_block_bytes(t);
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL: return static_cast<size_t>(whole_blocks(t, cols, kBlockSize)) * block32_format_bytes(t);
    case DType::IQ4_XS: return static_cast<size_t>(whole_blocks(t, cols, kSuperBlockSize)) * sizeof(BlockIQ4_XS);
  }
  throw Error("unknown storage type " + std::to_string(static_cast<int>(t)));
}

}  // namespace kiln
