// The forward pass on the CPU: the reference every other backend is measured against.
#pragma once

#include <memory>
#include <span>

#include "model/weights.h"
#include "profile/op_profile.h"
#include "runtime/backend.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/npu/attention_router.h"

namespace kiln {

struct MatmulKernels;

struct CpuOptions {
  int context_length = 4096;
  int threads = 0;
  DType kv_element = DType::F32;  // F16 halves the cache; F32 keeps the reference exact
  AttentionPlacement attention = AttentionPlacement::Auto;  // runtime/npu/attention_scheduler.h decides Auto
  AttentionRouting attention_routing;                       // timeouts and test hooks of the NPU path
  // false: Q8_0 / Q4_0 matrices multiply float activations (matmul_float_activations), the
  // reference the Vulkan fp32 path is tested against; true: integer activations, faster.
  bool integer_activations = true;
  // A kernel set to run every matmul, small op and attention loop with (tests force each set the
  // CPU has, matmul_kernels.h) in place of the fastest; integer_activations is then the set's own.
  // Null: the fastest.
  std::shared_ptr<const MatmulKernels> matmul_kernels;
};

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<const Gemma3Weights> weights, const CpuOptions& options);

// Scratch activations for up to `capacity` tokens of one batch (llama2.c's RunState).
struct RunState {
  int capacity = 0;
  std::vector<float> x;      // [n][hidden]  the residual stream
  std::vector<float> xn;     // [n][hidden]  normed input of a block
  std::vector<float> q;      // [n][heads * head_dim]
  std::vector<float> k;      // [n][kv_heads * head_dim]
  std::vector<float> v;      // [n][kv_heads * head_dim]
  std::vector<float> att;    // [n][heads * head_dim]  attention output before o_proj
  std::vector<float> proj;   // [n][hidden]  output of o_proj / down_proj
  std::vector<float> gate;   // [n][ffn]
  std::vector<float> up;     // [n][ffn]
  void reserve(const Gemma3Config& c, int n);
};

// Positions [first, first + count) that attend to each other both ways (an image's soft tokens).
struct BidirectionalSpan {
  int64_t first = 0;
  int64_t count = 0;
};

// Attention of a batch of n new tokens at positions [pos, pos + n) for one layer. Keys and values
// of earlier positions come from the cache; those of the batch from k/v (already normed and rotated).
// A query inside one of `spans` (which lie inside the batch) also sees the rest of its span, on
// local layers too. Writes att [n][heads * head_dim]. Does not write the cache. The inner loops are
// `kernels`' (the backend's set: its dot_rows and ops).
void attention_batch(const MatmulKernels& kernels, const Gemma3Config& c, int layer, const KvCache& cache,
                     const float* q, const float* k, const float* v, int64_t pos, int n, float* att, ThreadPool& pool,
                     std::span<const BidirectionalSpan> spans = {});

// Attention of n tokens of n different sequences, one decode step each: token i at positions[i]
// over caches[i] (earlier positions) and its own fresh k/v rows. q [n][heads * head_dim], k and v
// [n][kv_heads * head_dim]; writes att [n][heads * head_dim]. Does not write the caches.
void attention_sequences(const MatmulKernels& kernels, const Gemma3Config& c, int layer,
                         std::span<const KvCache* const> caches, std::span<const int64_t> positions, const float* q,
                         const float* k, const float* v, float* att, ThreadPool& pool);

// Stores the batch's keys and values in the cache (after attention_batch: a local layer's ring may
// overwrite positions that queries of the same batch still needed).
void store_kv(const Gemma3Config& c, int layer, KvCache& cache, const float* k, const float* v, int64_t pos, int n);

}  // namespace kiln
