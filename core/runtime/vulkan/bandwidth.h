// The device-bandwidth probe for benchmarks: the memory-bound ceiling decode is measured against.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

struct VulkanBandwidth {
  std::string device;
  uint64_t buffer_bytes = 0;  // bytes copied each pass
  double copy_gbs = 0;        // compute-shader copy, (bytes read + bytes written) / time, 1e9 B/s
  double best_pass_ms = 0;
};

// Copies a device buffer of `bytes` (clamped to what one binding can see) into another with a
// compute shader `passes` times, checks the copy, and reports the fastest pass. Throws kiln::Error
// when no device can run it.
VulkanBandwidth measure_vulkan_bandwidth(int device, bool allow_cpu, uint64_t bytes, int passes);

}  // namespace kiln
