// What the machine offers the engine: CPU, memory, Vulkan devices, the NPU (and why not).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct MemoryHeap {
  uint64_t size = 0;
  bool device_local = false;
};

// The plan the Vulkan backend makes for a device at load (core/runtime/vulkan/kernel_plan.h), in
// words for reports: `kiln info --hardware`, `kiln bench --json`.
struct GpuPlan {
  std::string family;        // the row of the family table: "nvidia", "amd", "intel", "cpu", "other"
  // batches: "khr_coopmat" (VK_KHR_cooperative_matrix), "nv_coopmat" (VK_NV_…), "int_dot" (int8
  // tiles) or "fp32" tiles
  std::string prefill;
  std::string prefill_sums = "fp32";  // the tiles' sums: "fp32", or "fp16" (--tune coop_sums=f16)
  std::string decode;        // one token: "int8_act", "int8_staged", "int8_dot" or "fp32" matvecs
  bool stage_flags = false;  // decode steps ordered by stage flags; false: pipeline barriers
  bool run_ahead = false;    // greedy steps queued one ahead on the GPU
  int subgroup_size = 0;
};

// How a CPU implementation of Vulkan (lavapipe, SwiftShader: type "cpu") is named once it runs a
// model: `auto` never picks one (Kiln's CPU path is faster); it runs only when chosen by hand.
inline constexpr const char* kSoftwareVulkan = "software Vulkan (slow, for testing)";

struct GpuDevice {
  int index = -1;                 // Vulkan physical-device index (what --device takes)
  std::string name;
  std::string type;               // "integrated", "discrete", "virtual", "cpu", "other"
  std::string driver;
  std::string api_version;
  std::vector<MemoryHeap> heaps;
  bool usable = false;            // the engine would run on it
  std::string refusal;            // why not, when !usable
  bool fp16 = false, int8 = false, storage16 = false, storage8 = false, integer_dot = false;
  bool integer_dot_fast = false;    // 4 x int8 dots in hardware: decode multiplies int8 activations
  bool cooperative_matrix = false;  // fp16 matrix units (VK_KHR_ or VK_NV_cooperative_matrix): prefill uses them
  int subgroup_size = 0;
  uint64_t max_storage_buffer_range = 0;
  // What the backend would plan for it (Q8_0/Q4_0 weights, no tuning); none where it cannot run Kiln.
  std::optional<GpuPlan> plan;
};

struct NpuInfo {
  bool present = false;
  std::string reason;             // why not, when absent ("no /dev/accel device", ...)
  std::string device_path;        // /dev/accel/accel0
  std::string generation;         // "XDNA (Phoenix / Hawk Point)", "XDNA2 (Strix)", ...
  std::string xrt_version;        // "" when XRT was not found
};

struct HardwareInfo {
  std::string cpu_model;
  int cpu_cores = 0;              // logical cores
  uint64_t ram_total = 0;
  uint64_t ram_available = 0;
  std::vector<GpuDevice> gpus;
  std::string vulkan_status;      // "" when Vulkan works, else why not (no loader, no device, not built)
  NpuInfo npu;
};

HardwareInfo probe_hardware();

// Resident memory of this process now and at its peak, in bytes (from /proc/self/status).
uint64_t resident_memory_bytes();
uint64_t available_memory_bytes();  // MemAvailable: what can be allocated without swapping
uint64_t peak_resident_memory_bytes();

}  // namespace kiln
