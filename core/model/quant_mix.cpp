// llama.cpp's tensor mixes (src/llama-quant.cpp, read as the reference for what its file types
// mean), restated for Gemma 3's tensors:
//
//  - Vectors (the RMSNorm weights) stay F32 in every mix.
//  - The token embedding is also the output projection (tied), the tensor most sensitive to
//    rounding: Q8_0 in a Q8_0 file, Q6_K in every other mix.
//  - Q4_K_M is Q4_K everywhere except attn_v and ffn_down in the layers its "use more bits" rule
//    picks, which get Q6_K: the first eighth of the layers, the last eighth, and every third
//    layer in between, i.e. layer i of n when i < n/8, or i >= 7n/8, or (i - n/8) % 3 == 2
//    (integer division). The K-quant files of other sizes (Q6_K) are Q6_K throughout.
//  - A row that is not a whole number of the type's blocks cannot hold it. llama.cpp then falls
//    back to a 32-weight type: Q4_K to Q5_0 (most matrices of Gemma 3 1B and 270M, whose hidden
//    sizes 1152 and 640 are not multiples of 256), Q6_K to Q8_0, Q2_K / Q3_K to Q4_0, as here;
//    Q5_K to Q5_1, which Kiln does not write (Q8_0 here). Q8_0 / Q4_0 fall back to F16.
#include "model/quant_mix.h"

#include <cctype>

#include "quant/kquants.h"

namespace kiln {
namespace {

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// -1 for tensors outside the layers.
int layer_of(const std::string& canonical) {
  if (canonical.rfind("layers.", 0) != 0) return -1;
  int layer = 0;
  for (size_t i = 7; i < canonical.size() && std::isdigit(static_cast<unsigned char>(canonical[i])); ++i)
    layer = layer * 10 + (canonical[i] - '0');
  return layer;
}

bool use_more_bits(int layer, int layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

DType base_type(QuantMix mix) {
  switch (mix) {
    case QuantMix::Q4_K_M: return DType::Q4_K;
    case QuantMix::Q6_K: return DType::Q6_K;
    case QuantMix::Q8_0: return DType::Q8_0;
    case QuantMix::Q4_0: return DType::Q4_0;
  }
  return DType::Q8_0;
}

}  // namespace

std::optional<QuantMix> parse_quant_mix(std::string_view text) {
  std::string lower;
  for (char c : text) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "q4_k_m") return QuantMix::Q4_K_M;
  if (lower == "q6_k") return QuantMix::Q6_K;
  if (lower == "q8_0") return QuantMix::Q8_0;
  if (lower == "q4_0") return QuantMix::Q4_0;
  return std::nullopt;
}

const char* to_string(QuantMix mix) {
  switch (mix) {
    case QuantMix::Q4_K_M: return "q4_k_m";
    case QuantMix::Q6_K: return "q6_k";
    case QuantMix::Q8_0: return "q8_0";
    case QuantMix::Q4_0: return "q4_0";
  }
  return "?";
}

uint32_t llama_file_type(QuantMix mix) {
  switch (mix) {
    case QuantMix::Q4_K_M: return 15;
    case QuantMix::Q6_K: return 18;
    case QuantMix::Q8_0: return 7;
    case QuantMix::Q4_0: return 2;
  }
  return 0;
}

TensorTypeChoice quant_type_for(QuantMix mix, const std::string& canonical, const std::vector<int64_t>& shape,
                                int num_layers) {
  TensorTypeChoice choice;
  if (shape.size() < 2 || ends_with(canonical, "norm.weight")) return choice;  // F32
  DType wanted = base_type(mix);
  if (canonical == "embed_tokens.weight" || canonical == "lm_head.weight") {
    wanted = mix == QuantMix::Q8_0 ? DType::Q8_0 : DType::Q6_K;
  } else if (mix == QuantMix::Q4_K_M &&
             (ends_with(canonical, "self_attn.v_proj.weight") || ends_with(canonical, "mlp.down_proj.weight")) &&
             use_more_bits(layer_of(canonical), num_layers)) {
    wanted = DType::Q6_K;
  }
  const int64_t cols = shape.back();
  choice.type = choice.wanted = wanted;
  if (is_kquant(wanted) && cols % kSuperBlockSize != 0) {
    const DType fallback = wanted == DType::Q4_K                              ? DType::Q5_0
                           : wanted == DType::Q2_K || wanted == DType::Q3_K ? DType::Q4_0
                                                                              : DType::Q8_0;
    choice.type = cols % kBlockSize == 0 ? fallback : DType::F16;
  } else if ((wanted == DType::Q8_0 || wanted == DType::Q4_0) && cols % kBlockSize != 0) {
    choice.type = DType::F16;
  }
  return choice;
}

}  // namespace kiln
