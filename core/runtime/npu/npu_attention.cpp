#include "runtime/npu/npu_attention.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/cpu/thread_pool.h"
#include "runtime/npu/npu_emulator.h"

namespace kiln {

NpuAttention::NpuAttention(std::unique_ptr<NpuDevice> device, ThreadPool& pool, std::optional<NpuTileShape> shape)
    : device_(std::move(device)), pool_(pool), shape_(shape) {}

void NpuAttention::run(const Gemma3Config& c, int layer, const KvCache& cache, const float* q, const float* k,
                       const float* v, int64_t pos, int n, float* att, std::chrono::steady_clock::time_point deadline,
                       int kv_split) {
  NpuTileShape shape = shape_ ? *shape_ : npu_tile_shape(c.head_dim, kv_split);
  if (shape.head_dim != c.head_dim) throw Error("npu: the tile shape given is for another head_dim");
  const NpuPlan plan = plan_npu_attention(make_npu_problem(c, layer, pos, n), shape);
  const NpuBufferWords words = npu_launch_words(shape);
  q_words_.resize(size_t(words.q));
  kv_words_.resize(size_t(words.kv));
  out_words_.resize(size_t(words.out));
  const NpuKeySource keys{&cache, layer, k, v, pos};
  NpuMerge merge(plan);
  for (int launch = 0; launch < plan.launches; ++launch) {
    pack_npu_launch(plan, launch, q, keys, q_words_, kv_words_, pool_);
    device_->run({&plan, launch, q_words_, kv_words_, out_words_}, deadline);
    merge.add_launch(launch, out_words_, pool_);
    ++launches_;
    packed_bytes_ += uint64_t(words.q + words.kv) * 4;
  }
  merge.finish(att, pool_);
}

double compare_with_emulator(NpuDevice& device, int head_dim, ThreadPool& pool, int kv_split) {
  // Gemma-like: 4 query heads on 2 kv heads, a batch of 5 tokens after 1000 cached positions; the
  // local layer (window 24) sees one key chunk, the global one two chunks of the real tile shape.
  Gemma3Config c;
  c.num_layers = 1;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = head_dim;
  c.sliding_window = 24;
  c.query_pre_attn_scalar = float(head_dim);
  c.layer_is_global = {false};
  const int context = 1100, n = 5;
  const int64_t pos = 1000;
  KvCache cache(c, context, DType::F32);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto fill = [&](float* p, int64_t count) {
    for (int64_t i = 0; i < count; ++i) p[i] = normal(rng);
  };
  const int64_t row = int64_t(c.num_kv_heads) * head_dim;
  fill(reinterpret_cast<float*>(cache.keys(0)), int64_t(cache.slot_count(0)) * row);
  fill(reinterpret_cast<float*>(cache.values(0)), int64_t(cache.slot_count(0)) * row);
  std::vector<float> q(size_t(n) * c.num_heads * head_dim), k(size_t(n) * row), v(size_t(n) * row);
  fill(q.data(), int64_t(q.size()));
  fill(k.data(), int64_t(k.size()));
  fill(v.data(), int64_t(v.size()));
  // The global layer too: flip the layer kind and run both.
  double worst = 0;
  for (bool global : {false, true}) {
    c.layer_is_global = {global};
    std::vector<float> on_device(q.size()), emulated(q.size());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    // The device is borrowed: wrap it without taking ownership.
    struct Borrowed final : NpuDevice {
      NpuDevice& d;
      explicit Borrowed(NpuDevice& x) : d(x) {}
      std::string name() const override { return d.name(); }
      void run(const NpuJob& job, std::chrono::steady_clock::time_point t) override { d.run(job, t); }
      void reset() override { d.reset(); }
    };
    NpuAttention(std::make_unique<Borrowed>(device), pool)
        .run(c, 0, cache, q.data(), k.data(), v.data(), pos, n, on_device.data(), deadline, kv_split);
    NpuAttention(make_npu_emulator(pool), pool)
        .run(c, 0, cache, q.data(), k.data(), v.data(), pos, n, emulated.data(), deadline, kv_split);
    double scale = 0, diff = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      scale = std::max(scale, double(std::fabs(emulated[i])));
      diff = std::max(diff, double(std::fabs(on_device[i] - emulated[i])));
    }
    worst = std::max(worst, scale > 0 ? diff / scale : diff);
  }
  return worst;
}

}  // namespace kiln
