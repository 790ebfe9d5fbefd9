// One layer's attention through an NPU device: plan, pack a launch, run it, fold its results in,
// launch after launch, then write the output. Buffers are kept between calls (one launch's worth,
// whatever the context length).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/npu/npu_device.h"

namespace kiln {

class ThreadPool;

class NpuAttention {
 public:
  // shape: the kernel's tile shape for the model's head_dim unless given (tests use small ones).
  NpuAttention(std::unique_ptr<NpuDevice> device, ThreadPool& pool, std::optional<NpuTileShape> shape = {});

  std::string device_name() const { return device_->name(); }
  // NpuDevice::reset(): a fresh context after a timeout.
  void reset_device() { device_->reset(); }

  // The same job as attention_batch (runtime/cpu/cpu_backend.h). Writes att only when every launch
  // succeeded; throws kiln::Error (NpuTimeout past the deadline) otherwise. kv_split picks the kernel
  // variant (1, or 2: two columns share each key chunk); a shape given to the constructor wins.
  void run(const Gemma3Config& c, int layer, const KvCache& cache, const float* q, const float* k, const float* v,
           int64_t pos, int n, float* att, std::chrono::steady_clock::time_point deadline, int kv_split = 1);

  uint64_t launches() const { return launches_; }
  uint64_t packed_bytes() const { return packed_bytes_; }

 private:
  std::unique_ptr<NpuDevice> device_;
  ThreadPool& pool_;
  std::optional<NpuTileShape> shape_;
  std::vector<int32_t> q_words_, kv_words_, out_words_;
  uint64_t launches_ = 0, packed_bytes_ = 0;
};

// Runs a small random attention problem (head_dim, GQA, a sliding window, two chunks) on `device`
// and on the emulator, with the kernel variant kv_split, and returns the largest difference
// relative to the output's largest value: 0 when the hardware does exactly what the emulator models.
double compare_with_emulator(NpuDevice& device, int head_dim, ThreadPool& pool, int kv_split = 1);

}  // namespace kiln
