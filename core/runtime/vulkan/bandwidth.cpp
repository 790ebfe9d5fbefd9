#include "runtime/vulkan/bandwidth.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kiln/types.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/sequence.h"

namespace kiln {

VulkanBandwidth measure_vulkan_bandwidth(int device_index, bool allow_cpu, uint64_t bytes, int passes) {
  auto instance = std::make_shared<vk::Instance>();
  vk::Device device(instance, vk::choose_device(instance->devices(), device_index, allow_cpu));
  vk::MemoryArena arena(device, vk::MemoryKind::DeviceLocal, 1ull << 30, "the bandwidth probe");
  const uint64_t limit = std::min<uint64_t>({device.limits().maxStorageBufferRange, arena.max_block_bytes(), 4ull << 30});
  bytes = std::min(bytes, limit) / 16 * 16;
  const uint64_t words = bytes / 16;
  if (words == 0 || words > UINT32_MAX) throw Error("bandwidth probe: bad buffer size");
  vk::BufferSlice src = arena.allocate(bytes), dst = arena.allocate(bytes);

  // A pattern that differs per word, so a wrong index shows up in the check.
  {
    vk::Uploader up(device, 64ull << 20);
    std::vector<uint32_t> chunk(1 << 20);
    for (uint64_t at = 0; at < bytes; at += chunk.size() * 4) {
      const uint64_t n = std::min<uint64_t>(chunk.size(), (bytes - at) / 4);
      for (uint64_t i = 0; i < n; ++i) chunk[i] = uint32_t((at / 4 + i) * 2654435761u);
      up.write(src, at, chunk.data(), n * 4);
    }
    up.finish();
  }

  vk::PipelineLibrary pipelines(device, "");
  vk::DescriptorAllocator descriptors(device);
  const vk::Kernel& copy = pipelines.get("copy_words", 2);
  const vk::BufferSlice b[] = {src, dst};
  VkDescriptorSet set = descriptors.allocate(copy, b);
  const uint32_t groups = uint32_t(std::min<uint64_t>((words + 255) / 256, 65535));
  const vk::CopyPush push{uint32_t(words)};

  vk::CommandSequence seq(device, 4);
  VulkanBandwidth result;
  result.device = device.info().report.name;
  result.buffer_bytes = bytes;
  result.best_pass_ms = 1e30;
  for (int i = 0; i < std::max(passes, 1) + 1; ++i) {  // the first pass warms up
    seq.begin(true);
    seq.dispatch(copy, set, &push, sizeof push, groups, 1, 1, "copy", -1);
    seq.submit_and_wait();
    const auto prof = seq.take_profile();
    if (i > 0 && !prof.empty()) result.best_pass_ms = std::min(result.best_pass_ms, prof[0].micros / 1000.0);
  }
  if (!seq.can_profile()) throw Error("bandwidth probe: the device has no timestamps");

  // Check the first and the last MiB of the copy.
  vk::MemoryArena readback(device, vk::MemoryKind::HostReadback, 4ull << 20, "the bandwidth check");
  const uint64_t probe = std::min<uint64_t>(bytes, 1 << 20);
  vk::BufferSlice host = readback.allocate(2 * probe);
  seq.begin(false);
  seq.copy_to_host(dst, 0, host, 0, probe);
  seq.copy_to_host(dst, bytes - probe, host, probe, probe);
  seq.submit_and_wait();
  const uint32_t* got = reinterpret_cast<const uint32_t*>(host.mapped);
  for (uint64_t i = 0; i < probe / 4; ++i) {
    const uint64_t last = (bytes - probe) / 4 + i;
    if (got[i] != uint32_t(i * 2654435761u) || got[probe / 4 + i] != uint32_t(last * 2654435761u))
      throw Error("bandwidth probe: the copy came back wrong on " + result.device);
  }
  result.copy_gbs = 2.0 * double(bytes) / (result.best_pass_ms * 1e-3) / 1e9;
  return result;
}

}  // namespace kiln
