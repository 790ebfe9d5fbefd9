// The CPU backend's attention, routed to the device the scheduler picked for each phase (prefill:
// n > 1 tokens, decode: one) and layer kind. The NPU path (hardware or emulator) falls back to the
// CPU's attention_batch for the rest of a request when it throws or misses its deadline, and says so
// through take_notes() and counters(); after three failed requests in a row it stays off. A timed-out
// device is reset (a fresh hw_context) before the next request uses it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hardware.h"
#include "kiln/types.h"
#include "model/config.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/npu/attention_scheduler.h"
#include "runtime/npu/npu_device.h"

namespace kiln {

class ThreadPool;
class NpuAttention;
struct MatmulKernels;

// How the CPU backend routes attention beyond CpuOptions::attention. Defaults are for real use;
// tests replace the device (fault injection), the tile shape or the NPU probe.
struct AttentionRouting {
  std::chrono::milliseconds npu_timeout{10000};  // one layer's attention, all launches
  std::function<std::unique_ptr<NpuDevice>(ThreadPool&)> npu_device;  // replaces the emulator / XRT device
  std::optional<NpuTileShape> tile_shape;        // replaces the kernel's tile shape
  std::optional<NpuInfo> npu;                    // replaces detect_npu()
};

class AttentionRouter {
 public:
  AttentionRouter(const Gemma3Config& config, AttentionPlacement placement, const AttentionRouting& routing,
                  int context, bool f16_kv, ThreadPool& pool);
  ~AttentionRouter();
  AttentionRouter(const AttentionRouter&) = delete;
  AttentionRouter& operator=(const AttentionRouter&) = delete;

  // A new request (one Backend::forward call): an NPU that failed in the last one gets another chance.
  void begin_request() { failed_this_request_ = false; }

  // attention_batch's job (runtime/cpu/cpu_backend.h) on the scheduled device; returns the device
  // that did it. The CPU runs it with `kernels` (the backend's set).
  AttentionDevice run(const MatmulKernels& kernels, int layer, const KvCache& cache, const float* q, const float* k,
                      const float* v, int64_t pos, int n, float* att);

  // "" when every phase runs on the CPU, else e.g. "attention on npu-emulator".
  std::string describe() const;
  std::vector<std::string> take_notes();
  std::vector<std::pair<std::string, double>> counters() const;
  const AttentionSchedule& schedule() const { return schedule_; }

 private:
  void add_note(std::string note);
  void fall_back(const std::string& why, int layer);
  // After a timeout: resets the device before its next use; false (and the NPU off, with a note)
  // when the reset fails.
  bool reset_after_timeout(int layer);

  const Gemma3Config& c_;
  ThreadPool& pool_;
  std::chrono::milliseconds timeout_;
  AttentionSchedule schedule_;
  std::unique_ptr<NpuAttention> npu_;
  std::vector<std::string> notes_;
  uint64_t dropped_notes_ = 0;
  bool failed_this_request_ = false;
  bool disabled_ = false;
  bool needs_reset_ = false;
  int failed_requests_in_a_row_ = 0;
  uint64_t npu_calls_ = 0, fallbacks_ = 0, timeouts_ = 0, resets_ = 0;
};

#ifdef KILN_HAVE_XRT_NPU
// The Phoenix NPU through XRT (xrt_npu_device.cpp): loads attention_d<head_dim>.xclbin and its
// instruction stream from kernel_dir, and the split variant attention_d<head_dim>_s2.* where it is
// installed (each on its own hw_context). Throws kiln::Error when the device or the files are missing.
std::unique_ptr<NpuDevice> make_xrt_npu_device(int head_dim, const std::string& kernel_dir);
#endif

}  // namespace kiln
