// Which storage type each tensor of a Gemma 3 model gets in a quantized file: llama.cpp's
// llama-quantize mixes, so that `kiln quantize --type q4_k_m` gives the file people download.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quant/dtype.h"

namespace kiln {

enum class QuantMix { Q4_K_M, Q6_K, Q8_0, Q4_0 };

std::optional<QuantMix> parse_quant_mix(std::string_view text);  // "q4_k_m", "Q6_K", ...
const char* to_string(QuantMix mix);                                // "q4_k_m"
uint32_t llama_file_type(QuantMix mix);  // general.file_type: llama.cpp's LLAMA_FTYPE_MOSTLY_* number

struct TensorTypeChoice {
  DType type = DType::F32;
  DType wanted = DType::F32;  // the mix's type; differs from `type` when the row length forced a fallback
};

// The type of tensor `canonical` (tensor_source.h's names) of shape [rows, cols] (vectors: [n]) in
// a model of `num_layers` layers.
TensorTypeChoice quant_type_for(QuantMix mix, const std::string& canonical, const std::vector<int64_t>& shape,
                                int num_layers);

}  // namespace kiln
