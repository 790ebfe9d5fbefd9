// The CPU backend's small ops and one layer's decode attention on the 1B shape, per kernel set
// (0 portable, 1 avx2, 2 the fastest), so each set's op table can be compared with the reference's.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "model/config.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/cpu/matmul_kernels.h"

namespace {

using namespace kiln;

MatmulKernels kernel_set(int64_t which) {
  if (which == 0 || !cpu_has_avx2_kernels()) return portable_matmul_kernels();
  return which == 1 ? avx2_matmul_kernels() : best_matmul_kernels();
}

std::vector<float> random_floats(size_t n, float sigma) {
  std::mt19937 rng(1);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// args: kernel set, n
void BM_gelu_tanh_mul(benchmark::State& state) {
  const MatmulKernels k = kernel_set(state.range(0));
  const int64_t n = state.range(1);
  const std::vector<float> gate = random_floats(size_t(n), 2.0f), up = random_floats(size_t(n), 1.0f);
  std::vector<float> out(static_cast<size_t>(n));
  for (auto _ : state) {
    k.ops.gelu_tanh_mul(gate.data(), up.data(), n, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(k.name);
}
BENCHMARK(BM_gelu_tanh_mul)->ArgsProduct({{0, 1, 2}, {6912}});

void BM_rms_norm(benchmark::State& state) {
  const MatmulKernels k = kernel_set(state.range(0));
  const int64_t n = state.range(1);
  const std::vector<float> x = random_floats(size_t(n), 2.0f), w = random_floats(size_t(n), 1.0f);
  std::vector<float> out(static_cast<size_t>(n));
  for (auto _ : state) {
    k.ops.rms_norm(x.data(), w.data(), n, 1e-6f, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(k.name);
}
BENCHMARK(BM_rms_norm)->ArgsProduct({{0, 1, 2}, {1152, 5376}});

void BM_softmax(benchmark::State& state) {
  const MatmulKernels k = kernel_set(state.range(0));
  const int64_t n = state.range(1);
  const std::vector<float> x = random_floats(size_t(n), 5.0f);
  std::vector<float> work(static_cast<size_t>(n));
  for (auto _ : state) {
    work = x;
    k.ops.softmax(work.data(), n);
    benchmark::DoNotOptimize(work.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(k.name);
}
BENCHMARK(BM_softmax)->ArgsProduct({{0, 1, 2}, {512, 4096}});

// One decode token's attention in a global layer of the 1B shape (4 heads, 1 kv head, dim 256) over
// `keys` cached positions of an F16 cache. args: kernel set, keys, threads
void BM_attention_decode(benchmark::State& state) {
  const MatmulKernels k = kernel_set(state.range(0));
  const int64_t keys = state.range(1);
  ThreadPool pool(int(state.range(2)));
  Gemma3Config c;
  c.num_layers = 1;
  c.num_heads = 4;
  c.num_kv_heads = 1;
  c.head_dim = 256;
  c.hidden_size = 1152;
  c.query_pre_attn_scalar = 256;
  c.layer_is_global = {true};
  KvCache cache(c, int(keys + 1), DType::F16);
  const std::vector<float> kv = random_floats(size_t(keys) * 256, 1.0f);
  store_kv(c, 0, cache, kv.data(), kv.data(), 0, int(keys));
  const std::vector<float> q = random_floats(4 * 256, 1.0f), k1 = random_floats(256, 1.0f);
  std::vector<float> att(4 * 256);
  for (auto _ : state) {
    attention_batch(k, c, 0, cache, q.data(), k1.data(), k1.data(), keys, 1, att.data(), pool);
    benchmark::DoNotOptimize(att.data());
  }
  state.SetItemsProcessed(state.iterations() * 4 * (keys + 1));  // key rows a head reads
  state.SetLabel(k.name);
}
BENCHMARK(BM_attention_decode)->ArgsProduct({{0, 1, 2}, {64, 512, 4096}, {1, 2}})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
