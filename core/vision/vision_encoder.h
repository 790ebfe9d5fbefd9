// Gemma 3's eyes: the SigLIP vision tower and the multimodal projector that turn one image into
// `tokens_per_image` soft tokens of the text model's width.
//
//   patches  = patch_embed(pixels) + position_embed          [patches][hidden]
//   x        = encoder layers (LayerNorm, bidirectional attention, LayerNorm, gelu-tanh MLP), post LayerNorm
//   pooled   = average pooling of the patch grid to sqrt(tokens_per_image)^2 cells
//   out      = rms_norm(pooled) . input_projection          [tokens_per_image][text_hidden]
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "image/image.h"
#include "model/checkpoint.h"
#include "quant/dtype.h"
#include "runtime/cpu/thread_pool.h"

namespace kiln {

struct VisionConfig {
  int image_size = 0;         // the tower's square input, in pixels
  int patch_size = 0;
  int hidden = 0;             // the tower's width
  int intermediate = 0;       // its MLP's width
  int layers = 0;
  int heads = 0;
  float layer_norm_eps = 1e-6f;
  int tokens_per_image = 0;   // mm_tokens_per_image
  int text_hidden = 0;        // the projector's output width (the text model's hidden size)
  PixelNorm norm;             // preprocessor_config.json / the mmproj's image_mean and image_std
  // Token ids of the chat format (Hugging Face config.json: boi_token_index, eoi_token_index,
  // image_token_index; -1 where the files do not say, e.g. GGUF, and the tokenizer must tell).
  int boi_token = -1, eoi_token = -1, image_token = -1;
};

// Where a model's tower is, found from config and headers without reading a weight.
struct VisionSource {
  VisionConfig config;
  std::string path;    // the Hugging Face folder, or the mmproj file
  bool gguf = false;   // an mmproj file
};

// The model's tower: a Hugging Face folder's own (vision_config + vision_tower.* tensors), the
// mmproj file named by `mmproj`, or for a GGUF model with mmproj empty the one mmproj*.gguf beside
// it (none or several: no tower). nullopt for a text-only model. Throws kiln::Error naming the file
// for an mmproj that is not one, or whose projector does not fit the text model (text_hidden).
std::optional<VisionSource> find_vision(const Checkpoint& model, const std::string& mmproj);

class VisionEncoder {
 public:
  // Reads the tower's weights, matrices held in `matrices` (F32 or F16; the patch embedding,
  // biases and norms stay F32). Throws kiln::Error naming the file and tensor for a missing tensor
  // or a wrong shape.
  static std::unique_ptr<VisionEncoder> load(const VisionSource& source, DType matrices);
  // Random weights of a real shape (benchmarks: `kiln bench --image`).
  static std::unique_ptr<VisionEncoder> synthetic(const VisionConfig& config, DType matrices, uint64_t seed);
  virtual ~VisionEncoder() = default;

  virtual const VisionConfig& config() const = 0;
  virtual uint64_t bytes() const = 0;  // weights held
  // pixels: [3][image_size][image_size] (tower_input). Returns [tokens_per_image][text_hidden].
  virtual std::vector<float> encode(std::span<const float> pixels, ThreadPool& pool) const = 0;
};

}  // namespace kiln
