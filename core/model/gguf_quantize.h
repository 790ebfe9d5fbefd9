// `kiln quantize`: a Gemma 3 model (Hugging Face folder or GGUF file) written as a quantized GGUF
// file with llama.cpp's tensor mix (model/quant_mix.h), names and metadata.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/quant_mix.h"

namespace kiln {

struct QuantizeOptions {
  std::string input;   // Hugging Face folder or .gguf
  std::string output;  // the GGUF file to write (replaced atomically; its folder must exist)
  QuantMix mix = QuantMix::Q4_K_M;
  int threads = 0;     // 0: all cores
  std::function<void(int done, int total)> progress;  // per tensor written
};

struct QuantizeReport {
  std::vector<std::string> notes;                    // fallbacks, dropped tensors, what GGUF cannot say
  std::vector<std::pair<std::string, int>> types;    // storage type -> tensor count, in first-use order
  int tensors = 0;
  uint64_t bytes = 0;                                // size of the file written
};

// Reads the input tensor by tensor (one tensor's worth of rows converted at a time), writes the
// output atomically. Throws kiln::Error naming the file or tensor; no output is left behind then.
QuantizeReport quantize_model(const QuantizeOptions& options);

}  // namespace kiln
