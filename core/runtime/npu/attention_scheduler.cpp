#include "runtime/npu/attention_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "runtime/npu/npu_cycle_model.h"
#include "runtime/npu/npu_layout.h"

namespace kiln {

std::string to_string(AttentionDevice d) {
  switch (d) {
    case AttentionDevice::Cpu: return "cpu";
    case AttentionDevice::Gpu: return "gpu";
    case AttentionDevice::Npu: return "npu";
    case AttentionDevice::NpuEmulator: return "npu-emulator";
  }
  return "cpu";
}

bool AttentionSchedule::uses(AttentionDevice d) const {
  for (const auto& phase : device)
    for (AttentionDevice x : phase)
      if (x == d) return true;
  return false;
}

namespace {

constexpr int kPrefillChunk = 256;  // the CPU backend's prefill batch
constexpr double kNever = std::numeric_limits<double>::infinity();

struct Work {
  int64_t pos = 0;
  int n = 1;
  double flops = 0;
  double kv_elements = 0;  // distinct K and V elements read
};

Work representative_work(AttentionPhase phase, LayerKind kind, const ScheduleInputs& in) {
  Work w;
  const int context = std::max(1, in.context);
  w.n = phase == AttentionPhase::Prefill ? std::min(kPrefillChunk, context) : 1;
  w.pos = std::max<int64_t>(0, std::min<int64_t>(context - w.n, context / 2));
  const bool local = kind == LayerKind::Local && in.window > 0;
  double keys = 0;
  for (int t = 0; t < w.n; ++t) {
    const int64_t seen = w.pos + t + 1;
    keys += double(local ? std::min<int64_t>(in.window, seen) : seen);
  }
  w.flops = 4.0 * in.heads * in.head_dim * keys;
  const int64_t distinct = local ? std::min<int64_t>(in.window + w.n - 1, w.pos + w.n) : w.pos + w.n;
  w.kv_elements = 2.0 * double(distinct) * in.kv_heads * in.head_dim;
  return w;
}

double npu_seconds(const Work& w, LayerKind kind, const ScheduleInputs& in, int kv_split) {
  if (in.kv_heads <= 0 || in.heads % in.kv_heads != 0 || !npu_kernel_exists(in.head_dim)) return kNever;
  NpuProblem p;
  p.heads = in.heads;
  p.kv_heads = in.kv_heads;
  p.head_dim = in.head_dim;
  p.window = kind == LayerKind::Local ? in.window : 0;
  p.pos = w.pos;
  p.n = w.n;
  const NpuPlan plan = plan_npu_attention(p, npu_tile_shape(in.head_dim, kv_split));
  const NpuBufferWords words = npu_launch_words(plan.shape);
  const double buffer_bytes = 4.0 * double(words.q + words.kv + words.out) * plan.launches;
  // Packing reads every packed key once per item that holds it, and writes every buffer word.
  double packed_keys = 0;
  for (int64_t step : plan.item_steps) packed_keys += double(plan.steps[step].key_end - plan.steps[step].key_begin);
  const double source_bytes = packed_keys * 2.0 * in.head_dim * (in.f16_kv ? 2 : 4);
  const double host = (source_bytes + buffer_bytes) / (in.rates.pack_bytes_per_core_s * std::max(1, in.threads));
  // The array: each launch as long as its slowest column (npu_cycle_model.h), never faster than
  // its buffers cross DDR.
  double cycles = 0;
  for (int launch = 0; launch < plan.launches; ++launch) cycles += npu_launch_cycles(plan, launch);
  const double device = std::max(cycles / (in.rates.npu_clock_hz * in.rates.npu_cycle_derate),
                                 buffer_bytes / in.rates.memory_bytes_per_s);
  return host + device + plan.launches * in.rates.npu_launch_s;
}

}  // namespace

double estimate_npu_seconds(AttentionPhase phase, LayerKind kind, const ScheduleInputs& in, int kv_split) {
  return npu_seconds(representative_work(phase, kind, in), kind, in, kv_split);
}

int npu_kv_split_for(AttentionPhase phase, LayerKind kind, const ScheduleInputs& in) {
  if (!in.npu_kv_split) return 1;
  return estimate_npu_seconds(phase, kind, in, 2) < estimate_npu_seconds(phase, kind, in, 1) ? 2 : 1;
}

double estimate_attention_seconds(AttentionDevice device, AttentionPhase phase, LayerKind kind,
                                  const ScheduleInputs& in) {
  const Work w = representative_work(phase, kind, in);
  switch (device) {
    case AttentionDevice::Cpu: {
      const double per_core = in.f16_kv ? in.rates.cpu_flops_per_core_f16_kv : in.rates.cpu_flops_per_core_f32_kv;
      const double bytes = w.kv_elements * (in.f16_kv ? 2 : 4);
      return std::max(w.flops / (per_core * std::max(1, in.threads)), bytes / in.rates.memory_bytes_per_s);
    }
    case AttentionDevice::Gpu:
      return in.gpu_backend ? std::max(w.flops / in.rates.gpu_flops, w.kv_elements * 2 / in.rates.memory_bytes_per_s)
                            : kNever;
    case AttentionDevice::Npu:
      return in.npu_usable ? npu_seconds(w, kind, in, npu_kv_split_for(phase, kind, in)) : kNever;
    case AttentionDevice::NpuEmulator: return kNever;  // a test tool, never a choice of the cost model
  }
  return kNever;
}

AttentionSchedule schedule_attention(const ScheduleInputs& in) {
  AttentionSchedule s;
  const AttentionDevice base = in.gpu_backend ? AttentionDevice::Gpu : AttentionDevice::Cpu;
  const std::string base_name = to_string(base);
  auto set_all = [&](AttentionDevice d) {
    for (auto& phase : s.device)
      for (AttentionDevice& x : phase) x = d;
  };
  set_all(base);
  // Which kernel variant the NPU or the emulator runs, wherever it runs.
  for (AttentionPhase phase : {AttentionPhase::Prefill, AttentionPhase::Decode})
    for (LayerKind kind : {LayerKind::Local, LayerKind::Global})
      s.npu_kv_split[int(phase)][int(kind)] = npu_kv_split_for(phase, kind, in);
  switch (in.requested) {
    case AttentionPlacement::Cpu:
      set_all(AttentionDevice::Cpu);
      return s;
    case AttentionPlacement::Gpu:
      if (!in.gpu_backend) s.notes.push_back("attention on the GPU needs the Vulkan backend; attention runs on the CPU");
      return s;
    case AttentionPlacement::NpuEmulator:
      if (in.head_dim % 8 != 0 || in.head_dim > 256) {
        s.notes.push_back("the NPU emulator has no kernel for head_dim " + std::to_string(in.head_dim) +
                          "; attention runs on the " + base_name);
        return s;
      }
      set_all(AttentionDevice::NpuEmulator);
      return s;
    case AttentionPlacement::Npu:
      if (!in.npu_usable) {
        s.notes.push_back("NPU attention was asked for, but " + in.npu_reason + "; attention runs on the " + base_name);
        return s;
      }
      if (!npu_kernel_exists(in.head_dim)) {
        s.notes.push_back("the NPU kernel is built for head_dim 128 and 256, not " + std::to_string(in.head_dim) +
                          "; attention runs on the " + base_name);
        return s;
      }
      set_all(AttentionDevice::Npu);
      return s;
    case AttentionPlacement::Auto: break;
  }
  if (!in.npu_usable) return s;  // nothing to decide: today's path, at today's speed
  for (AttentionPhase phase : {AttentionPhase::Prefill, AttentionPhase::Decode})
    for (LayerKind kind : {LayerKind::Local, LayerKind::Global}) {
      const double t_base = estimate_attention_seconds(base, phase, kind, in);
      const double t_npu = estimate_attention_seconds(AttentionDevice::Npu, phase, kind, in);
      s.estimates.push_back({phase, kind, base, t_base});
      const int split = s.kv_split_at(phase, kind);
      s.estimates.push_back({phase, kind, AttentionDevice::Npu, t_npu, split});
      const bool npu = t_npu * in.rates.npu_margin < t_base;
      s.device[int(phase)][int(kind)] = npu ? AttentionDevice::Npu : base;
      char line[240];
      std::snprintf(line, sizeof line,
                    "attention, %s %s layers: %s (estimated %.3g ms on the NPU%s, %.3g ms on the %s)",
                    phase == AttentionPhase::Prefill ? "prefill" : "decode",
                    kind == LayerKind::Local ? "local" : "global", npu ? "npu" : base_name.c_str(), t_npu * 1e3,
                    split == 2 ? " with two columns per key chunk" : "", t_base * 1e3, base_name.c_str());
      s.notes.push_back(line);
    }
  return s;
}

}  // namespace kiln
