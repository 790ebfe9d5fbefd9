// The model's weights on the device, uploaded once at load and never written again: every matrix
// in the GPU layout (weight_layout.h; q|k|v stacked, gate/up interleaved), the norm vectors packed
// into one buffer, and the arena that holds them. What runs on them is the plan's
// (model_kernels.h); what changes as the model runs is the context's (ModelGpu).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/weights.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/weight_layout.h"

namespace kiln::vk {

struct LayerWeightsGpu {
  DeviceMatrix qkv;      // [(heads + 2 kv_heads) * head_dim, hidden]; a mixed stack where the file mixes types
  DeviceMatrix o;        // [hidden, heads * head_dim]
  DeviceMatrix gate_up;  // [2 ffn, hidden], rows gate0 up0 gate1 ... (GLU)
  DeviceMatrix down;     // [hidden, ffn]
  // Float offsets into WeightsGpu::norms.
  uint32_t input_norm = 0, post_attn_norm = 0, pre_ffn_norm = 0, post_ffn_norm = 0, q_norm = 0, k_norm = 0;
};

struct WeightsGpu {
  std::unique_ptr<MemoryArena> arena;  // device-local (mappable on unified memory)
  DeviceMatrix embed;                  // [vocab, hidden]: the embedding, and the output projection
  std::vector<LayerWeightsGpu> layers;
  BufferSlice norms;                   // every norm vector, each from a multiple of 4 floats (vec4 loads)
  uint32_t final_norm = 0;             // float offset into norms
  uint64_t bytes = 0;                  // the matrices' weights and scales
};

// Uploads w (checked against its config by the caller) for `plan` (force_staging, max_chunk_bytes).
// release: the same weights, each host matrix freed once it is on the device (nullptr: kept).
WeightsGpu upload_weights(Device& device, const Gemma3Weights& w, const KernelPlan& plan,
                          Gemma3Weights* release = nullptr);

}  // namespace kiln::vk
