// The SigLIP vision tower and Gemma 3's projector on a Vulkan device: the same computation as the
// CPU encoder (core/vision/siglip_tower.cpp), every matrix, the attention and the norms on the GPU.
// Weights are uploaded once (matrices F16 or F32 as loaded, biases and norms F32); each image is one
// recorded command buffer: patch embedding, the encoder layers, the post LayerNorm, pooling, RMSNorm
// and the projection, with only the pixels going up and the image's soft tokens coming back.
#pragma once

#include <memory>
#include <string>

#include "kiln/types.h"
#include "vision/vision_encoder.h"
#include "vision/vision_weights.h"

namespace kiln {

struct VulkanVisionOptions {
  int device = -1;                 // the device index (vk::choose_device); -1: the best real GPU
  bool allow_cpu_device = false;   // lavapipe when no real GPU is there (tests, --backend vulkan)
};

class VulkanVisionEncoder : public VisionEncoder {
 public:
  // "NAME" of the device it runs on (with "software Vulkan" for a CPU implementation).
  virtual std::string device_name() const = 0;
  // GPU time of each dispatch of the following encodes, summed per (op, layer) (benchmarks).
  virtual void set_profiling(bool enabled) = 0;
  virtual std::vector<OpTiming> take_profile() = 0;
};

// Builds the device's pipelines and uploads `weights` (their host copies are freed on return).
// Throws kiln::Error when there is no usable device or its memory is too small, so the caller can
// keep the tower on the CPU instead.
std::unique_ptr<VulkanVisionEncoder> make_vulkan_vision_encoder(SiglipWeights weights,
                                                                const VulkanVisionOptions& options);

}  // namespace kiln
