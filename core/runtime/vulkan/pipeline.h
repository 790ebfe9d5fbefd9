// Compute pipelines built once at load from the embedded SPIR-V (through an on-disk pipeline cache,
// so later loads skip the driver's compiler), and descriptor sets allocated once and reused.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"

namespace kiln::vk {

constexpr uint32_t kPushConstantBytes = 128;  // every kernel's push block fits the spec's minimum
// Specialization constants of stage_flags.glsl, beside each kernel's own (ids 0, 1, ...).
constexpr uint32_t kStageSpinRoundsId = 14, kStageBackoffId = 15;

// SPIR-V words of an embedded kernel (kernels/vulkan), e.g. "matvec_q4_0". Throws if unknown.
std::span<const uint32_t> kernel_spirv(const std::string& name);
// Whether the build embedded that kernel: the KHR cooperative-matrix ones need Debian 13's glslc.
bool kernel_built(const std::string& name);

struct Kernel {
  std::string name;
  uint32_t bindings = 0;  // storage buffers 0 .. bindings-1
  bool stage_flags = false;  // takes STAGE_PUSH (kernels/vulkan/stage_flags.glsl): decode kernels
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
};

// stage_flags.glsl's bounded wait: polls before it gives up, idle between polls
// (KernelPlan::stage_spin_rounds, stage_backoff).
struct StageWait {
  uint32_t spin_rounds = 20000, backoff = 32;
};
StageWait default_stage_wait(const PhysicalDeviceInfo& info);

class PipelineLibrary {
 public:
  // cache_path: where the pipeline cache is read from and saved to ("" for none).
  // stage_wait: none for the device's default. capture_statistics: keep what the driver reports of
  // each pipeline (statistics(), where Device::info().pipeline_statistics; tests/vulkan/kernel_stats).
  PipelineLibrary(Device& device, std::string cache_path, std::optional<StageWait> stage_wait = std::nullopt,
                  bool capture_statistics = false);
  ~PipelineLibrary();
  PipelineLibrary(const PipelineLibrary&) = delete;
  PipelineLibrary& operator=(const PipelineLibrary&) = delete;

  // The pipeline of `spirv_name` with these specialization constants (ids 0, 1, ...), created on
  // first request. All requests happen at load; the counter shows any later one.
  const Kernel& get(const std::string& spirv_name, uint32_t bindings, std::vector<uint32_t> spec = {});
  // The same for SPIR-V the caller embeds (a benchmark's own kernels), keyed by `name`.
  const Kernel& get(const std::string& name, std::span<const uint32_t> spirv, uint32_t bindings,
                    std::vector<uint32_t> spec = {});

  // Writes the pipeline cache to disk (best effort: a read-only home is not an error).
  void save_cache();

  // The driver's statistics of a kernel's pipeline (name, value), e.g. ("Register Count", "155"):
  // empty unless the library captures them.
  std::vector<std::pair<std::string, std::string>> statistics(const Kernel& kernel) const;

  // The default cache file for a device: $XDG_CACHE_HOME/kiln or ~/.cache/kiln, "" when neither.
  static std::string default_cache_path(const PhysicalDeviceInfo& info);

 private:
  VkDescriptorSetLayout set_layout(uint32_t bindings);

  Device& device_;
  std::string cache_path_;
  StageWait stage_wait_;
  bool capture_statistics_ = false;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::map<uint32_t, std::pair<VkDescriptorSetLayout, VkPipelineLayout>> layouts_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

// Descriptor sets: pools grow as needed at load; nothing is freed until the backend goes.
class DescriptorAllocator {
 public:
  explicit DescriptorAllocator(Device& device);
  ~DescriptorAllocator();
  DescriptorAllocator(const DescriptorAllocator&) = delete;
  DescriptorAllocator& operator=(const DescriptorAllocator&) = delete;

  // A set for `kernel` with binding i = buffers[i] (whole slices).
  VkDescriptorSet allocate(const Kernel& kernel, std::span<const BufferSlice> buffers);

 private:
  Device& device_;
  std::vector<VkDescriptorPool> pools_;
  uint32_t left_in_pool_ = 0;
};

}  // namespace kiln::vk
