// The SigLIP tower's and Gemma 3 projector's weights as the encoder holds them, read from a Hugging
// Face folder's safetensors or from an mmproj GGUF, or made up for benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "quant/matrix.h"
#include "vision/vision_encoder.h"

namespace kiln {

struct SiglipLayer {
  std::vector<float> norm1_weight, norm1_bias;  // [hidden] LayerNorm before attention
  Matrix q, k, v, out;                          // [hidden][hidden]
  std::vector<float> q_bias, k_bias, v_bias, out_bias;  // [hidden]
  std::vector<float> norm2_weight, norm2_bias;  // [hidden] LayerNorm before the MLP
  Matrix fc1;                                   // [intermediate][hidden]
  std::vector<float> fc1_bias;                  // [intermediate]
  Matrix fc2;                                   // [hidden][intermediate]
  std::vector<float> fc2_bias;                  // [hidden]
};

struct SiglipWeights {
  VisionConfig config;
  Matrix patch;                     // F32 [hidden][3 * patch * patch], columns in (channel, y, x) order
  std::vector<float> patch_bias;    // [hidden]
  std::vector<float> position;      // [patches][hidden], patch = row * grid + column
  std::vector<SiglipLayer> layers;
  std::vector<float> post_norm_weight, post_norm_bias;  // [hidden]
  std::vector<float> soft_norm;     // [hidden] the projector's RMSNorm multiplier, 1 + w
  Matrix projection;                // [text_hidden][hidden]: the checkpoint's [hidden][text_hidden], transposed

  uint64_t bytes() const;
};

// Throws kiln::Error unless the tower's matrices can be held in `matrices` (F32 or F16).
void check_vision_matrix_type(DType matrices);

// Whether a Hugging Face folder's weights hold any tower tensor (read from the safetensors header or
// the shard index, no weight touched): a config with vision_config but no tower is a text model.
bool folder_has_vision_tensors(const std::string& folder);

// Reads and converts every tensor, matrices to `matrices` (F32 or F16). Throws kiln::Error
// "FILE: tensor NAME: problem" for a missing tensor, a wrong shape or an unreadable type.
SiglipWeights load_siglip_weights(const VisionSource& source, DType matrices);

// Random weights of the config's shape, scaled so activations stay of order one.
SiglipWeights synthetic_siglip_weights(const VisionConfig& config, DType matrices, uint64_t seed);

}  // namespace kiln
