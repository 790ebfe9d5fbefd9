// What runs the attention kernel on packed buffers: the real NPU through XRT, or the emulator.
// Everything before (planning, packing) and after (merging) is shared host code.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "kiln/types.h"
#include "runtime/npu/npu_layout.h"

namespace kiln {

// A device that did not finish in time. The caller falls back to another path.
class NpuTimeout : public Error {
 public:
  using Error::Error;
};

// One kernel launch: its buffers hold npu_launch_words(plan->shape) words each.
struct NpuJob {
  const NpuPlan* plan = nullptr;
  int launch = 0;
  std::span<const int32_t> q_words;
  std::span<const int32_t> kv_words;
  std::span<int32_t> out_words;
};

class NpuDevice {
 public:
  virtual ~NpuDevice() = default;
  // "npu" for hardware, "npu-emulator" for the emulator: what profiles and notes call it.
  virtual std::string name() const = 0;
  // Runs the launch and fills out_words. Throws kiln::Error on failure and NpuTimeout when the
  // work is not done by `deadline`.
  virtual void run(const NpuJob& job, std::chrono::steady_clock::time_point deadline) = 0;
  // After a timeout the device's state is unknown (a hung launch may still hold the array), so the
  // router calls this before the next request uses it: the XRT device drops its hw_context, kernel
  // and buffers and opens them afresh (the xclbin reloaded onto the array). Throws kiln::Error when
  // that fails. The emulator has no state to lose.
  virtual void reset() {}
};

}  // namespace kiln
