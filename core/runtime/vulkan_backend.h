// The Vulkan backend's factory. Implemented in runtime/vulkan when Vulkan is built
// (which defines KILN_HAVE_VULKAN on kiln_core).
#pragma once

#include <memory>
#include <string>

#include "model/weights.h"
#include "runtime/backend.h"

namespace kiln {

struct VulkanOptions {
  int device = -1;             // -1: the best real GPU; a CPU implementation only if asked or none else
  bool allow_cpu_device = false;  // allow lavapipe when no real GPU is there (tests set this)
  int context_length = 4096;
  bool f16_kv = true;          // KV cache in fp16 (F32 precision keeps it in fp32)
  VulkanTuning tuning;         // overrides of the device's plan (runtime/vulkan/kernel_plan.h)
};

// Throws kiln::Error for an unknown tuning key or a bad value, naming it and listing the keys.
void check_vulkan_tuning(const VulkanTuning& tuning);

// Uploads the weights and builds every pipeline once. Throws kiln::Error (no device, out of device
// memory, ...) so the engine can say why and fall back to the CPU.
std::unique_ptr<Backend> make_vulkan_backend(std::shared_ptr<const Gemma3Weights> weights,
                                             const VulkanOptions& options);
// The same, freeing each host matrix (its storage) once it is on the device, so a model is never
// held twice while it uploads: on an integrated GPU both copies would be the laptop's RAM. When it
// throws, some matrices may be gone already: the caller reloads them for the CPU.
std::unique_ptr<Backend> make_vulkan_backend_releasing(std::shared_ptr<Gemma3Weights> weights,
                                                       const VulkanOptions& options);

}  // namespace kiln
