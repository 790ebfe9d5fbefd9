// Where attention runs, per phase (prefill: many tokens, decode: one) and layer kind (local
// sliding-window, global), from a cost model of each device. The numbers and the reasoning are in
// core/runtime/npu/DESIGN.md; the rates below are its inputs.
#pragma once

#include <string>
#include <vector>

#include "kiln/types.h"

namespace kiln {

enum class AttentionDevice { Cpu, Gpu, Npu, NpuEmulator };
std::string to_string(AttentionDevice d);

enum class AttentionPhase { Prefill = 0, Decode = 1 };
enum class LayerKind { Local = 0, Global = 1 };

// Sustained rates of a Phoenix laptop (Ryzen 7 7840U / 7940HS class, Radeon 780M, XDNA NPU).
// Measured where a measurement exists (see DESIGN.md for each source), else a stated assumption.
struct DeviceRates {
  double cpu_flops_per_core_f32_kv = 1.3e9;  // cpu_attention.cpp, measured (CPU time) with an F32 cache
  double cpu_flops_per_core_f16_kv = 0.6e9;  // the same with an F16 cache (conversion per element)
  double gpu_flops = 2.0e12;                 // assumed: a quarter of the 780M's ~8.9 TFLOPS fp16 peak
  double npu_clock_hz = 1.0e9;               // assumed: the AIE clock that AMD's published 10 TOPS implies
  double npu_cycle_derate = 0.8;             // assumed: the cycle model (npu_cycle_model.h) reaches 80 %
  double memory_bytes_per_s = 75e9;          // dual-channel DDR5-5600 in practice (docs/gemma3.md)
  double npu_launch_s = 100e-6;              // assumed per xrt::run (submit, firmware, wait)
  double pack_bytes_per_core_s = 5.0e9;      // npu_layout.cpp's packer, measured (bytes read + written)
  double npu_margin = 2.0;                   // Auto picks the NPU only when estimated this many times faster
};

// The model and machine facts the schedule depends on.
struct ScheduleInputs {
  AttentionPlacement requested = AttentionPlacement::Auto;
  bool gpu_backend = false;       // the Vulkan backend runs the layer (it keeps attention on the GPU)
  bool npu_usable = false;        // an NPU, an XRT build that can drive it and the kernels are all there
  std::string npu_reason;         // why not, when !npu_usable
  bool npu_kv_split = true;       // the variant where two columns share a key chunk can run (its
                                  // kernel files are installed; the emulator always can)
  int heads = 0, kv_heads = 0, head_dim = 0, window = 0;
  int context = 0;                // positions the cache holds
  int threads = 1;                // CPU threads attention may use
  bool f16_kv = true;
  DeviceRates rates;
};

struct AttentionEstimate {
  AttentionPhase phase;
  LayerKind kind;
  AttentionDevice device;
  double seconds;                 // one layer's attention for the phase's representative batch
  int kv_split = 1;               // NPU estimates: the kernel variant (columns per key chunk)
};

struct AttentionSchedule {
  AttentionDevice device[2][2] = {{AttentionDevice::Cpu, AttentionDevice::Cpu},
                                  {AttentionDevice::Cpu, AttentionDevice::Cpu}};  // [phase][kind]
  std::vector<AttentionEstimate> estimates;  // every device considered
  std::vector<std::string> notes;            // what the caller should hear (a request not honoured, ...)
  // The NPU kernel variant each phase and layer kind runs (NPU or emulator): 2 where two columns
  // sharing each key chunk are estimated faster (decode with few kv heads), else 1.
  int npu_kv_split[2][2] = {{1, 1}, {1, 1}};

  AttentionDevice at(AttentionPhase p, LayerKind k) const { return device[int(p)][int(k)]; }
  int kv_split_at(AttentionPhase p, LayerKind k) const { return npu_kv_split[int(p)][int(k)]; }
  bool uses(AttentionDevice d) const;
};

// Representative work of a phase: prefill is a 256-token chunk halfway through the context, decode
// one token halfway through it (a local layer sees min(window, context) keys either way).
// For the NPU: the faster kernel variant's time (see npu_kv_split_estimate).
double estimate_attention_seconds(AttentionDevice device, AttentionPhase phase, LayerKind kind,
                                  const ScheduleInputs& in);

// The NPU's estimate with one kernel variant (kv_split 1 or 2), whether or not an NPU is usable;
// infinite where no kernel exists for the head size.
double estimate_npu_seconds(AttentionPhase phase, LayerKind kind, const ScheduleInputs& in, int kv_split);
// The variant the NPU (and the emulator) runs for a phase and layer kind: the faster by
// estimate_npu_seconds, 1 on a tie or where the split variant cannot run.
int npu_kv_split_for(AttentionPhase phase, LayerKind kind, const ScheduleInputs& in);

AttentionSchedule schedule_attention(const ScheduleInputs& in);

}  // namespace kiln
