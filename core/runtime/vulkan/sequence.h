// Recording and submitting work. Two frames (command buffer, fence, timestamp pool), reset and
// reused, never reallocated: one can be recorded while the other runs, so the next decode step's
// commands are ready before the current one finishes. Compute-to-compute barriers separate
// dependent dispatches; one submit and one fence wait per frame; optional timestamps around every
// dispatch, summed per (op, layer).
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
  // max_dispatches: timestamps a frame can hold (profiling beyond it is dropped, not wrong).
  CommandSequence(Device& device, uint32_t max_dispatches);
  ~CommandSequence();
  CommandSequence(const CommandSequence&) = delete;
  CommandSequence& operator=(const CommandSequence&) = delete;

  bool can_profile() const { return frames_[0].query_pool != VK_NULL_HANDLE; }

  // Starts recording a free frame and returns it; its first commands make earlier uploads, host
  // writes and compute results visible.
  int begin(bool profile);
  // Recording into the frame begin() returned last. A dispatch's groups_x beyond the device limit
  // must already be folded into y by the caller.
  void dispatch(const Kernel& kernel, VkDescriptorSet set, const void* push, uint32_t push_bytes, uint32_t groups_x,
                uint32_t groups_y, uint32_t groups_z, const char* op, int layer);
  void barrier();  // later dispatches see everything earlier ones wrote
  void copy_to_host(const BufferSlice& src, VkDeviceSize src_offset, const BufferSlice& dst, VkDeviceSize dst_offset,
                    VkDeviceSize bytes);
  void end();      // the recording frame is ready to submit

  void submit(int frame);   // one vkQueueSubmit
  void wait(int frame);     // fence wait; collects its timestamps
  void discard(int frame);  // a ready frame that will not be submitted
  void submit_and_wait();   // end, submit and wait for the recording frame

  uint32_t dispatches_recorded(int frame) const { return frames_[frame].dispatches; }
  bool profiling(int frame) const { return frames_[frame].profiling; }
  // Per (op, layer) GPU time since the last call.
  std::vector<OpTiming> take_profile();

 private:
  enum class State { Free, Recording, Ready, InFlight };
  struct Label {
    const char* op;
    int layer;
  };
  struct Frame {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkQueryPool query_pool = VK_NULL_HANDLE;
    State state = State::Free;
    bool profiling = false;
    uint32_t dispatches = 0;
    std::vector<Label> labels;  // label of timestamp i + 1 (the end of dispatch i)
  };
  Frame& rec() { return frames_[recording_]; }

  Device& device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  Frame frames_[2];
  int recording_ = -1;
  uint32_t max_queries_ = 0;
  std::map<std::pair<std::string, int>, OpTiming> totals_;
};

}  // namespace kiln::vk
