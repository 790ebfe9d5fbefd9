// IQ4_XS test weights. Kiln reads IQ4_XS but does not write it, so the tests make their own:
// quantize_iq4xs is a plain reference quantizer (not llama-quantize's search, but the same format:
// each sub-block's value of largest magnitude lands on the grid's -127, the sub-block scales share
// one fp16 d in 6 signed bits, every weight takes the nearest grid value); write_iq4xs_gguf turns a
// GGUF model into one whose every matrix is IQ4_XS (vectors, the norms, stay as they are).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "quant/iq4_xs.h"

namespace kiln::test {

// Index of the grid value nearest v.
inline int nearest_iq4_code(float v) {
  int best = 0;
  for (int c = 1; c < 16; ++c)
    if (std::fabs(v - float(kIq4nlValues[c])) < std::fabs(v - float(kIq4nlValues[best]))) best = c;
  return best;
}

// x: n floats, n % 256 == 0; out: n / 256 blocks.
inline void quantize_iq4xs(const float* x, int64_t n, BlockIQ4_XS* out) {
  for (int64_t k = 0; k < n / kSuperBlockSize; ++k, x += kSuperBlockSize) {
    float sub[8];  // each sub-block's scale: its value of largest magnitude over -127
    float largest = 0.0f;
    for (int s = 0; s < 8; ++s) {
      float max = 0.0f;
      for (int j = 0; j < 32; ++j)
        if (std::fabs(x[32 * s + j]) > std::fabs(max)) max = x[32 * s + j];
      sub[s] = max / -127.0f;
      if (std::fabs(sub[s]) > std::fabs(largest)) largest = sub[s];
    }
    BlockIQ4_XS& b = out[k];
    b = BlockIQ4_XS{};
    b.d = float_to_fp16(largest / -32.0f);  // the largest sub-block scale is d * -32
    const float d = fp16_to_float(b.d);
    for (int s = 0; s < 8; ++s) {
      const int l = d == 0.0f ? 0 : std::clamp(int(std::lround(sub[s] / d)), -32, 31);
      const int ls = l + 32;
      b.scales_l[s / 2] |= uint8_t((ls & 15) << (4 * (s % 2)));
      b.scales_h |= uint16_t((ls >> 4) << (2 * s));
      const float dl = d * float(l);
      for (int j = 0; j < 16; ++j) {
        const int lo = dl == 0.0f ? 8 : nearest_iq4_code(x[32 * s + j] / dl);
        const int hi = dl == 0.0f ? 8 : nearest_iq4_code(x[32 * s + j + 16] / dl);
        b.qs[16 * s + j] = uint8_t(lo | (hi << 4));
      }
    }
  }
}

// Copies the GGUF model at `source` to `out` with every 2-D tensor (the embedding and all layer
// matrices; their rows must be whole super-blocks) dequantized and quantized again as IQ4_XS.
inline void write_iq4xs_gguf(const std::string& source, const std::string& out) {
  auto in = GgufFile::open(source);
  GgufWriter w(out);
  for (const auto& [key, value] : in->metadata())
    if (key != "general.alignment" && key != "general.file_type") w.set_value(key, value);
  w.set_u32("general.file_type", 30);  // llama.cpp's LLAMA_FTYPE_MOSTLY_IQ4_XS
  auto matrix = [](const GgufTensorInfo& t) { return t.dims.size() == 2 && t.dims[1] > 1; };
  for (const GgufTensorInfo& t : in->tensors()) {
    if (matrix(t)) w.add_tensor(t.name, t.dims, GgmlType::IQ4_XS, t.dims[1] * row_bytes(DType::IQ4_XS, int64_t(t.dims[0])));
    else w.add_tensor(t.name, t.dims, GgmlType(t.type), t.bytes);
  }
  w.begin();
  for (const GgufTensorInfo& t : in->tensors()) {
    if (!matrix(t)) {
      w.write_tensor_data(t.data, t.bytes);
      continue;
    }
    const auto stored = ggml_dtype(t.type);
    if (!stored) throw Error(source + ": " + t.name + " is of a type the test cannot read");
    const int64_t cols = int64_t(t.dims[0]);
    std::vector<float> row(static_cast<size_t>(cols));
    std::vector<BlockIQ4_XS> blocks(static_cast<size_t>(cols / kSuperBlockSize));
    for (uint64_t r = 0; r < t.dims[1]; ++r) {
      dequantize_row(*stored, t.data + r * row_bytes(*stored, cols), cols, row.data());
      quantize_iq4xs(row.data(), cols, blocks.data());
      w.write_tensor_data(blocks.data(), blocks.size() * sizeof(BlockIQ4_XS));
    }
  }
  w.finish();
}

}  // namespace kiln::test
