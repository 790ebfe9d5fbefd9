#include "runtime/npu/attention_router.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/npu/npu_attention.h"
#include "runtime/npu/npu_detect.h"
#include "runtime/npu/npu_emulator.h"
#include "runtime/vulkan_probe.h"

namespace kiln {

namespace {

constexpr size_t kMaxPendingNotes = 32;      // nobody may be reading them
constexpr int kFailedRequestsBeforeOff = 3;
constexpr double kSelfCheckTolerance = 1e-2;  // hardware vs emulator, relative to the output's scale

}  // namespace

AttentionRouter::AttentionRouter(const Gemma3Config& config, AttentionPlacement placement,
                                 const AttentionRouting& routing, int context, bool f16_kv, ThreadPool& pool)
    : c_(config), pool_(pool), timeout_(routing.npu_timeout) {
  ScheduleInputs in;
  in.requested = placement;
  in.heads = config.num_heads;
  in.kv_heads = config.num_kv_heads;
  in.head_dim = config.head_dim;
  in.window = config.sliding_window;
  in.context = context;
  in.threads = pool.size();
  in.f16_kv = f16_kv;
  // Only Auto and Npu look for hardware; the probe reads a directory and a few sysfs files.
  if (placement == AttentionPlacement::Auto || placement == AttentionPlacement::Npu) {
    const NpuInfo info = routing.npu ? *routing.npu : detect_npu();
    in.npu_usable = npu_usable(info);
    in.npu_reason = info.reason.empty() ? "no NPU was found" : info.reason;
    // The split variant runs on hardware only where its kernel is installed; test devices run both.
    if (!routing.npu_device)
      in.npu_kv_split = std::filesystem::exists(npu_xclbin_path(npu_kernel_dir(), config.head_dim, 2));
  }
  schedule_ = schedule_attention(in);
  for (const std::string& note : schedule_.notes) add_note(note);

  const bool emulator = schedule_.uses(AttentionDevice::NpuEmulator);
  if (!emulator && !schedule_.uses(AttentionDevice::Npu)) return;
  try {
    std::unique_ptr<NpuDevice> device;
    if (routing.npu_device) {
      device = routing.npu_device(pool);
    } else if (emulator) {
      device = make_npu_emulator(pool);
    } else {
#ifdef KILN_HAVE_XRT_NPU
      device = make_xrt_npu_device(config.head_dim, npu_kernel_dir());
      // Trust the hardware only once it computes what the emulator models.
      double diff = compare_with_emulator(*device, config.head_dim, pool);
      if (in.npu_kv_split) diff = std::max(diff, compare_with_emulator(*device, config.head_dim, pool, 2));
      char line[160];
      std::snprintf(line, sizeof line, "NPU self-check: largest difference from the emulator %.3g of the output scale",
                    diff);
      add_note(line);
      if (!(diff <= kSelfCheckTolerance)) throw Error("the NPU's results differ from the emulator's");
#else
      throw Error("this build has no XRT NPU support");
#endif
    }
    if (!device) throw Error("no NPU device was created");
    npu_ = std::make_unique<NpuAttention>(std::move(device), pool, routing.tile_shape);
  } catch (const std::exception& e) {
    add_note(std::string("NPU attention is off: ") + e.what() + "; attention runs on the CPU");
    for (auto& phase : schedule_.device)
      for (AttentionDevice& d : phase) d = AttentionDevice::Cpu;
  }
}

AttentionRouter::~AttentionRouter() = default;

AttentionDevice AttentionRouter::run(const MatmulKernels& kernels, int layer, const KvCache& cache, const float* q,
                                     const float* k, const float* v, int64_t pos, int n, float* att) {
  const AttentionPhase phase = n > 1 ? AttentionPhase::Prefill : AttentionPhase::Decode;
  const LayerKind kind = c_.is_global(layer) ? LayerKind::Global : LayerKind::Local;
  const AttentionDevice want = schedule_.at(phase, kind);
  if ((want == AttentionDevice::Npu || want == AttentionDevice::NpuEmulator) && npu_ && !disabled_ &&
      !failed_this_request_ && reset_after_timeout(layer)) {
    try {
      npu_->run(c_, layer, cache, q, k, v, pos, n, att, std::chrono::steady_clock::now() + timeout_,
                schedule_.kv_split_at(phase, kind));
      ++npu_calls_;
      failed_requests_in_a_row_ = 0;
      return want;
    } catch (const NpuTimeout& e) {
      ++timeouts_;
      needs_reset_ = true;  // the next request starts on a fresh hw_context
      fall_back(e.what(), layer);
    } catch (const std::exception& e) {
      fall_back(e.what(), layer);
    }
  }
  attention_batch(kernels, c_, layer, cache, q, k, v, pos, n, att, pool_);
  return AttentionDevice::Cpu;
}

bool AttentionRouter::reset_after_timeout(int layer) {
  if (!needs_reset_) return true;
  needs_reset_ = false;
  try {
    npu_->reset_device();
    ++resets_;
    add_note(npu_->device_name() + " was reset after a timeout (a fresh hardware context, kernel reloaded)");
    return true;
  } catch (const std::exception& e) {
    disabled_ = true;
    add_note(npu_->device_name() + " could not be reset after a timeout (" + e.what() + ") at layer " +
             std::to_string(layer) + "; the NPU stays off until the model is reloaded and attention runs on the CPU");
    return false;
  }
}

void AttentionRouter::fall_back(const std::string& why, int layer) {
  ++fallbacks_;
  failed_this_request_ = true;
  disabled_ = ++failed_requests_in_a_row_ >= kFailedRequestsBeforeOff;
  add_note(npu_->device_name() + " attention failed at layer " + std::to_string(layer) + " (" + why +
           "); this request's attention runs on the CPU" +
           (disabled_ ? "; after " + std::to_string(kFailedRequestsBeforeOff) +
                            " failed requests in a row the NPU stays off until the model is reloaded"
                      : ""));
}

void AttentionRouter::add_note(std::string note) {
  if (notes_.size() < kMaxPendingNotes)
    notes_.push_back(std::move(note));
  else
    ++dropped_notes_;
}

std::vector<std::string> AttentionRouter::take_notes() {
  std::vector<std::string> out = std::move(notes_);
  notes_.clear();
  if (dropped_notes_ > 0) out.push_back(std::to_string(dropped_notes_) + " more attention notes were dropped");
  dropped_notes_ = 0;
  return out;
}

std::vector<std::pair<std::string, double>> AttentionRouter::counters() const {
  if (!npu_) return {};
  return {{"attention_npu_calls", double(npu_calls_)},
          {"attention_npu_fallbacks", double(fallbacks_)},
          {"attention_npu_timeouts", double(timeouts_)},
          {"attention_npu_resets", double(resets_)},
          {"attention_npu_launches", double(npu_->launches())},
          {"attention_npu_packed_bytes", double(npu_->packed_bytes())}};
}

std::string AttentionRouter::describe() const {
  const AttentionDevice first = schedule_.device[0][0];
  bool same = true;
  for (const auto& phase : schedule_.device)
    for (AttentionDevice d : phase) same = same && d == first;
  if (same) return first == AttentionDevice::Cpu ? "" : "attention on " + to_string(first);
  auto at = [&](AttentionPhase p, LayerKind k) { return to_string(schedule_.at(p, k)); };
  return "attention: prefill " + at(AttentionPhase::Prefill, LayerKind::Local) + "/" +
         at(AttentionPhase::Prefill, LayerKind::Global) + ", decode " + at(AttentionPhase::Decode, LayerKind::Local) +
         "/" + at(AttentionPhase::Decode, LayerKind::Global) + " (local/global)";
}

}  // namespace kiln
