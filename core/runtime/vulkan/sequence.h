// Recording and submitting work. Three frames (command buffer, fence, timestamp pool), reset and
// reused, never reallocated: one can be recorded while the others run, so the next decode step's
// commands are ready before the current one finishes, and greedy decoding can have the step after
// it queued on the GPU as well (VulkanBackend, "running ahead"). Compute-to-compute barriers separate
// dependent dispatches; one submit and one fence wait per frame; optional timestamps around every
// dispatch, summed per (op, layer).
//
// A frame begun with stage flags records no barriers between dispatches: barrier() ends a stage
// instead, and every workgroup of the next stage waits in the shader until all workgroups of this
// one have counted themselves done (kernels/vulkan/stage_flags.glsl). The GPU then overlaps each
// dispatch's start with the previous one's tail. A wait that gives up marks the frame abandoned;
// its results are then garbage and the caller must run the step again without flags.
#pragma once

#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/types.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"

namespace kiln::vk {

// Where stage_flags.glsl's STAGE_PUSH sits in every kernel's push constants.
constexpr uint32_t kStagePushOffset = 112;
constexpr uint32_t kStageLineBytes = 128;  // one counter a line (STAGE_LINE_WORDS)
struct StagePush {
  uint64_t counters = 0;  // device address of [abandoned, done[stage]...]
  uint32_t stage = 0;     // 0: no flags (the frame has barriers)
  uint32_t wait_groups = 0;
};

// Measurement switches (KernelPlan::fence_poll, stage_barrier_before).
struct SequenceOptions {
  bool fence_poll = true;      // wait(): sleep until shortly before a frame is due, then poll
  std::string barrier_before;  // op,op,...: with stage flags, a pipeline barrier before those ops too
};

class CommandSequence {
 public:
  // max_dispatches: timestamps a frame can hold (profiling beyond it is dropped, not wrong).
  CommandSequence(Device& device, uint32_t max_dispatches, SequenceOptions options = {});
  ~CommandSequence();
  CommandSequence(const CommandSequence&) = delete;
  CommandSequence& operator=(const CommandSequence&) = delete;

  bool can_profile() const { return frames_[0].query_pool != VK_NULL_HANDLE; }

  // Starts recording a free frame and returns it; its first commands make earlier uploads, host
  // writes and compute results visible. stage_flags: every kernel dispatched must take
  // STAGE_PUSH (Kernel::stage_flags).
  int begin(bool profile, bool stage_flags = false);
  // Recording into the frame begin() returned last. A dispatch's groups_x beyond the device limit
  // must already be folded into y by the caller.
  void dispatch(const Kernel& kernel, VkDescriptorSet set, const void* push, uint32_t push_bytes, uint32_t groups_x,
                uint32_t groups_y, uint32_t groups_z, const char* op, int layer);
  void barrier();  // later dispatches see everything earlier ones wrote (a stage ends, with flags)
  void copy_to_host(const BufferSlice& src, VkDeviceSize src_offset, const BufferSlice& dst, VkDeviceSize dst_offset,
                    VkDeviceSize bytes);
  // Host reads after the frame's fence see what dispatches so far wrote to host-visible memory.
  void barrier_to_host();
  void end();      // the recording frame is ready to submit

  void submit(int frame);   // one vkQueueSubmit
  // Fence wait; collects its timestamps. A frame submitted behind another one still running
  // (queued) is waited for asleep: the GPU has work meanwhile, so a late wake costs nothing.
  void wait(int frame);
  void discard(int frame);  // a ready frame that will not be submitted
  void submit_and_wait();   // end, submit and wait for the recording frame

  uint32_t dispatches_recorded(int frame) const { return frames_[frame].dispatches; }
  bool profiling(int frame) const { return frames_[frame].profiling; }
  bool stage_flags(int frame) const { return frames_[frame].stage_flags; }
  // After wait(frame): a stage's wait gave up, so the frame's results cannot be used.
  bool abandoned(int frame) const { return frames_[frame].abandoned; }
  // Tests: the next frame with stage flags gets a stage 2 that waits for one workgroup too many,
  // so its wait gives up and the frame is abandoned.
  void give_up_once() { give_up_once_ = true; }
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
    bool stage_flags = false, abandoned = false;
    bool queued = false;  // submitted while another frame was in flight
    uint32_t dispatches = 0;
    std::vector<Label> labels;  // label of timestamp i + 1 (the end of dispatch i)
    std::chrono::steady_clock::time_point submitted;
  };
  Frame& rec() { return frames_[recording_]; }

  Device& device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  static constexpr int kFrames = 3;
  Frame frames_[kFrames];
  int recording_ = -1;
  uint32_t max_queries_ = 0;
  std::map<std::pair<std::string, int>, OpTiming> totals_;
  // Stage flags: the counters (device-local, zeroed at the start of each flagged frame), a host
  // word per frame for the abandoned flag, and the recording frame's stage.
  std::unique_ptr<MemoryArena> counters_arena_, readback_arena_;
  BufferSlice counters_, readback_;
  VkDeviceAddress counters_address_ = 0;
  uint32_t max_stages_ = 0, stage_ = 0, stage_groups_ = 0, wait_groups_ = 0;
  // wait(): how long frames of a given dispatch count took from submit to done (a decode step
  // always records the same count), so the wait sleeps until shortly before and then polls.
  // SequenceOptions::fence_poll false: always sleep in vkWaitForFences.
  std::map<uint32_t, double> frame_micros_;
  bool fence_poll_ = true;
  bool give_up_once_ = false;
  // Measurement only (SequenceOptions::barrier_before = "o_proj,..."): a pipeline barrier before
  // those ops' dispatches as well, so that their workgroups are not resident (waiting) while the op
  // before runs.
  std::string barrier_before_;
  static bool listed(const std::string& list, const char* op);
};

}  // namespace kiln::vk
