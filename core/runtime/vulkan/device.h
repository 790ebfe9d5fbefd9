// Vulkan instance, physical-device probing and choice, and the logical device with its compute
// queue. Everything the backend learns about the hardware (limits, features, memory types) is read
// here once; nothing else queries the driver for capabilities.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/hardware.h"

namespace kiln::vk {

// What the device has done since it was created. The backend snapshots these around each forward
// call, so "allocations during decode" is a measurement, not a claim.
struct Counters {
  uint64_t memory_allocations = 0;        // vkAllocateMemory
  uint64_t buffers_created = 0;           // vkCreateBuffer
  uint64_t descriptor_sets_allocated = 0; // sets handed out by vkAllocateDescriptorSets
  uint64_t pipelines_created = 0;         // vkCreateComputePipelines
  uint64_t pipeline_lookups = 0;          // PipelineLibrary::get by name: at load (never while recording)
  uint64_t submits = 0;                   // vkQueueSubmit
};

struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  GpuDevice report;                   // what `kiln info --hardware` shows, usable/refusal included
  std::string hard_refusal;           // missing capability: never used, even when asked for
  bool cpu_implementation = false;    // lavapipe/SwiftShader: used only when asked for
  VkDriverId driver_id = VkDriverId(0);  // Vulkan 1.2's driver identity (0: not reported)
  bool unified_memory = false;        // integrated/CPU: weights can live in mappable device memory
  bool fp16_math = false;             // shaderFloat16 (Vulkan 1.2)
  bool int8_dot = false;              // shaderIntegerDotProduct: int8 decode kernels can run
  bool int8_dot_fast = false;         // ... and 4x8-bit signed dots are a hardware instruction
  // VK_NV_cooperative_matrix with fp16 x fp16 -> fp32 16x16x16 in subgroups of 32, the Vulkan
  // memory model and shaderFloat16: the tensor-core prefill kernels (matmul_coop_*).
  bool coop_matrix_f16 = false;
  // VK_KHR_cooperative_matrix (RDNA3, Intel, NVIDIA too) listing fp16 x fp16 -> fp32 16x16x16 at
  // subgroup scope, with the memory model, shaderFloat16 and subgroups of 32: by default, or asked
  // for through VK_EXT_subgroup_size_control (coop_khr_subgroup_size 32; RDNA3 defaults to 64).
  // The prefill kernels matmul_coop_khr_* (KernelPlan::prefill khr_coopmat).
  bool coop_khr_f16 = false;
  bool coop_khr_f16_acc_only = false;   // ... only an fp16-accumulating 16x16x16: not used (fp32 sums)
  bool coop_khr_f16_sums = false;       // ... an fp16-accumulating 16x16x16 too (KernelPlan::coop_half_sums)
  uint32_t coop_khr_subgroup_size = 0;  // 32: the pipelines must ask for it; 0: the default is 32
  bool full_subgroups = false;          // computeFullSubgroups (with coop_khr_subgroup_size)
  // bufferDeviceAddress (Vulkan 1.2): the decode kernels reach the stage counters through an
  // address in push constants (CommandSequence), so a device without it is refused.
  bool device_address = false;
  // VK_KHR_pipeline_executable_properties: the driver reports each pipeline's registers and shared
  // memory (tests/vulkan/kernel_stats.cpp, for tuning); enabled when offered, unused by the engine.
  bool pipeline_statistics = false;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t compute_family = UINT32_MAX;
  uint32_t timestamp_valid_bits = 0;  // 0: no timestamps on the compute queue (no profiling)
  uint32_t subgroup_size = 0;
  bool subgroup_shuffle = false;      // subgroupShuffleXor in compute shaders (matvec_staged_glu_qout_*)
  uint64_t max_memory_allocation = 0;
  uint64_t max_buffer_size = 0;
};

class Instance {
 public:
  // Throws kiln::Error when there is no loader or no driver.
  Instance();
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  const std::vector<PhysicalDeviceInfo>& devices() const { return devices_; }

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<PhysicalDeviceInfo> devices_;
};

// The device to use: `requested` (>= 0) if it can run Kiln at all, else the best real GPU, else a
// CPU implementation when allow_cpu. Throws kiln::Error saying why each device was refused.
int choose_device(const std::vector<PhysicalDeviceInfo>& devices, int requested, bool allow_cpu);

class Device {
 public:
  Device(std::shared_ptr<Instance> instance, int index);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return info_.compute_family; }
  const PhysicalDeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceLimits& limits() const { return info_.properties.limits; }
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }

  // Index of a memory type allowed by type_bits with all `required` flags, preferring one with
  // `preferred` too; UINT32_MAX when none.
  uint32_t find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred = 0) const;

  // Waits for the queue to go idle (teardown, tests).
  void wait_idle() const;

 private:
  std::shared_ptr<Instance> instance_;
  PhysicalDeviceInfo info_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  Counters counters_;
};

}  // namespace kiln::vk
