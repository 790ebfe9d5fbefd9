// The decode skeleton: how close to the copy bandwidth Gemma 3 27B's decode could get on this GPU
// if every matrix-vector product were a perfect stream of its weight bytes (arithmetic free) and
// attention and the norms took no time, for three ways of ordering the work:
//   chain7     today's structure: a dispatch per matrix, plus one near-empty dispatch where the
//              attention and each add_norm stand (7 dependent dispatches a layer, a barrier each)
//   chain4     the same without those three (4 a layer: attention and norms folded away)
//   persistent one dispatch a layer, its workgroups meeting at device-wide barriers where the real
//              layer has dependencies, optionally loading the next matrix before they wait
// Every variant reads the same bytes per token as the real model (the layers' matrices and the
// output projection, in Q4_0 and Q8_0 with a Q8_0 embedding). Prints ms a token and the fraction of
// the measured copy bandwidth. A measurement, not a test. --quick: tiny sizes, one-workgroup
// persistent runs only (a lavapipe smoke test).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "runtime/vulkan/bandwidth.h"
#include "runtime/vulkan/weight_layout.h"
#include "bench_harness.h"
#include "skeleton_spirv_table.h"  // stream_read, skeleton_layer (tests/vulkan/kernels)

using namespace kiln;

namespace {

struct Matrices {  // bytes a layer's matrices occupy on the GPU (weights + scales)
  uint64_t qkv, o, gate_up, down, logits;
  uint64_t per_token(int layers) const { return uint64_t(layers) * (qkv + o + gate_up + down) + logits; }
};

uint64_t gpu_bytes(DType t, int64_t rows, int64_t cols) {
  return vk::layout_weight_bytes(t, rows, cols) + vk::layout_scale_bytes(t, rows, cols);
}

Matrices gemma3_27b(DType t, int64_t shrink) {
  const int64_t hidden = 5376, ffn = 21504, q = 32 * 128, kv = 16 * 128, vocab = 262208;
  return {gpu_bytes(t, (q + 2 * kv) / shrink, hidden), gpu_bytes(t, hidden / shrink, q),
          gpu_bytes(t, 2 * ffn / shrink, hidden), gpu_bytes(t, hidden / shrink, ffn),
          gpu_bytes(DType::Q8_0, vocab / shrink, hidden)};
}

struct LayerBuffers {
  vk::BufferSlice m[4];  // qkv, o, gate_up, down
  VkDescriptorSet read[4] = {};
  VkDescriptorSet persistent = VK_NULL_HANDLE;
};

class Skeleton {
 public:
  Skeleton(bench::Bench& b, const Matrices& sizes, int layers) : b_(b), sizes_(sizes) {
    sink_ = b.arena->allocate(4096);
    sync_ = b.arena->allocate(16);
    const uint32_t zero[4] = {0, 0, 0, 0};
    b.uploader->write(sync_, 0, zero, sizeof zero);
    b.uploader->finish();
    read_ = &b.pipelines->get("stream_read", skeleton_spirv::stream_read, 2);
    layer_ = &b.pipelines->get("skeleton_layer", skeleton_spirv::skeleton_layer, 6);
    const uint64_t each[4] = {sizes.qkv, sizes.o, sizes.gate_up, sizes.down};
    layers_.resize(size_t(layers));
    for (LayerBuffers& l : layers_) {
      for (int i = 0; i < 4; ++i) {
        l.m[i] = b.arena->allocate(each[i]);
        l.read[i] = b.descriptors->allocate(*read_, std::vector{l.m[i], sink_});
      }
      l.persistent = b.descriptors->allocate(*layer_, std::vector{l.m[0], l.m[1], l.m[2], l.m[3], sync_, sink_});
    }
    // The output projection in pieces of at most 512 MiB (one binding each), read side by side.
    for (uint64_t left = sizes.logits; left > 0;) {
      const uint64_t n = std::min<uint64_t>(left, 512ull << 20);
      logits_.push_back(b.arena->allocate(n));
      logit_sets_.push_back(b.descriptors->allocate(*read_, std::vector{logits_.back(), sink_}));
      left -= n;
    }
  }

  // One stream_read over a buffer, no barrier.
  void read(VkDescriptorSet set, uint64_t bytes) {
    const uint32_t words = uint32_t(bytes / 16);
    const uint32_t push[2] = {words, 0};
    const uint32_t groups = std::max<uint32_t>(1, std::min<uint32_t>((words + 1023) / 1024, 65535));
    b_.seq->dispatch(*read_, set, push, sizeof push, groups, 1, 1, "read", 0);
  }
  void near_empty() {  // where attention or an add_norm stands: one small read and its barrier
    read(layers_[0].read[1], 64 * 1024);
    b_.seq->barrier();
  }
  void logits() {
    for (size_t i = 0; i < logits_.size(); ++i) read(logit_sets_[i], logits_[i].size);
    b_.seq->barrier();
  }

  void chain(bool with_empty) {
    for (LayerBuffers& l : layers_) {
      read(l.read[0], sizes_.qkv);
      b_.seq->barrier();
      if (with_empty) near_empty();
      read(l.read[1], sizes_.o);
      b_.seq->barrier();
      if (with_empty) near_empty();
      read(l.read[2], sizes_.gate_up);
      b_.seq->barrier();
      read(l.read[3], sizes_.down);
      b_.seq->barrier();
      if (with_empty) near_empty();
    }
    logits();
  }

  void persistent(uint32_t groups, bool prefetch) {
    for (LayerBuffers& l : layers_) {
      struct {
        uint32_t count[4], base, prefetch, never;
      } p{{uint32_t(sizes_.qkv / 16), uint32_t(sizes_.o / 16), uint32_t(sizes_.gate_up / 16),
           uint32_t(sizes_.down / 16)},
          arrived_, prefetch ? 1u : 0u, 0};
      arrived_ += 4 * groups;  // four device-wide barriers a layer
      b_.seq->dispatch(*layer_, l.persistent, &p, sizeof p, groups, 1, 1, "layer", 0);
      b_.seq->barrier();
    }
    logits();
  }

  // GPU time of one token (first to last timestamp), and host wall time of one submission of it.
  template <typename F>
  std::pair<double, double> time_token(F&& record) {
    const double gpu_ms = b_.time(1, record) / 1000.0;
    b_.seq->begin(false);
    record();
    const auto t0 = std::chrono::steady_clock::now();
    b_.seq->submit_and_wait();
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return {gpu_ms, wall_ms};
  }

 private:
  bench::Bench& b_;
  Matrices sizes_;
  const vk::Kernel *read_ = nullptr, *layer_ = nullptr;
  vk::BufferSlice sink_, sync_;
  std::vector<LayerBuffers> layers_;
  std::vector<vk::BufferSlice> logits_;
  std::vector<VkDescriptorSet> logit_sets_;
  uint32_t arrived_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int device = -1, layers = 62;
  int64_t shrink = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = std::atoi(argv[++i]);
    if (a == "--quick") shrink = 64, layers = 2;
  }
  try {
    const VulkanBandwidth copy = measure_vulkan_bandwidth(device, true, 1ull << 30, 5);
    std::printf("device %s, copy %.0f GB/s\n", copy.device.c_str(), copy.copy_gbs);
    bench::Bench b(device);
    std::vector<uint32_t> group_counts = {132, 264, 528};
    if (shrink > 1) group_counts = {1};  // lavapipe may run workgroups one after another

    // The read ceiling: one stream over 768 MiB.
    {
      const uint64_t bytes = (768ull << 20) / uint64_t(shrink);
      vk::BufferSlice big = b.arena->allocate(bytes), sink = b.arena->allocate(4096);
      const vk::Kernel& k = b.pipelines->get("stream_read", skeleton_spirv::stream_read, 2);
      VkDescriptorSet set = b.descriptors->allocate(k, std::vector{big, sink});
      const uint32_t words = uint32_t(bytes / 16), push[2] = {words, 0};
      for (uint32_t groups : {std::min<uint32_t>((words + 1023) / 1024, 65535), 528u, 1056u}) {
        const double us = b.time(5, [&] {
          b.seq->dispatch(k, set, push, sizeof push, groups, 1, 1, "read", 0);
          b.seq->barrier();
        });
        std::printf("read ceiling, %u workgroups: %.0f GB/s (%.1f%% of copy)\n", groups, double(bytes) / us / 1e3,
                    100.0 * double(bytes) / us / 1e3 / copy.copy_gbs);
      }
    }

    std::printf("\n| weights | variant | ms a token (GPU) | wall | GB/s | of copy |\n|---|---|---|---|---|---|\n");
    for (DType t : {DType::Q4_0, DType::Q8_0}) {
      const Matrices sizes = gemma3_27b(t, shrink);
      Skeleton s(b, sizes, layers);
      const double bytes = double(sizes.per_token(layers));
      auto row = [&](const std::string& name, std::pair<double, double> ms) {
        const double gbs = bytes / (ms.first * 1e-3) / 1e9;
        std::printf("| %s | %s | %.2f | %.2f | %.0f | %.1f%% |\n", to_string(t), name.c_str(), ms.first,
                    ms.second, gbs, 100.0 * gbs / copy.copy_gbs);
      };
      row("chain7", s.time_token([&] { s.chain(true); }));
      row("chain4", s.time_token([&] { s.chain(false); }));
      for (uint32_t g : group_counts)
        for (bool pf : {false, true})
          row("persistent " + std::to_string(g) + (pf ? " prefetch" : ""), s.time_token([&] { s.persistent(g, pf); }));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_decode_skeleton: %s\n", e.what());
    return 1;
  }
  return 0;
}
