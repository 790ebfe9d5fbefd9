// Recording and submitting work: one command buffer reused for every forward call (reset, never
// reallocated), compute-to-compute barriers between dependent dispatches, one submit and one fence
// wait per call, and optional timestamps around every dispatch summed per (op, layer).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/types.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"

namespace kiln::vk {

class CommandSequence {
 public:
  // max_dispatches: timestamps a recording can hold (profiling beyond it is dropped, not wrong).
  CommandSequence(Device& device, uint32_t max_dispatches);
  ~CommandSequence();
  CommandSequence(const CommandSequence&) = delete;
  CommandSequence& operator=(const CommandSequence&) = delete;

  bool can_profile() const { return query_pool_ != VK_NULL_HANDLE; }

  // Starts a recording; the first commands make earlier uploads and host writes visible.
  void begin(bool profile);
  // A dispatch; groups_x beyond the device limit must already be folded into y by the caller.
  void dispatch(const Kernel& kernel, VkDescriptorSet set, const void* push, uint32_t push_bytes, uint32_t groups_x,
                uint32_t groups_y, uint32_t groups_z, const char* op, int layer);
  // Later dispatches see everything earlier ones wrote.
  void barrier();
  // Copies device data for the host to read after submit_and_wait().
  void copy_to_host(const BufferSlice& src, VkDeviceSize src_offset, const BufferSlice& dst, VkDeviceSize dst_offset,
                    VkDeviceSize bytes);
  // Ends, submits once and waits for the GPU to finish.
  void submit_and_wait();

  uint32_t dispatches_recorded() const { return dispatches_; }
  // Per (op, layer) GPU time since the last call.
  std::vector<OpTiming> take_profile();

 private:
  Device& device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  uint32_t max_queries_ = 0;
  bool profiling_ = false, recording_ = false;
  uint32_t dispatches_ = 0;
  struct Label {
    const char* op;
    int layer;
  };
  std::vector<Label> labels_;  // label of timestamp i + 1 (the end of dispatch i)
  std::map<std::pair<std::string, int>, OpTiming> totals_;
};

}  // namespace kiln::vk
