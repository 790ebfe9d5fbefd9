// Shared by the NPU tests: random attention problems in the CPU backend's layout, with a KV cache
// holding the positions before the batch (ring slots for local layers).
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "model/config.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/kv_cache.h"

namespace kiln::test {

struct AttentionCase {
  Gemma3Config config;
  int layer = 0;              // layer 0 is local, layer 1 global
  int64_t pos = 0;
  int n = 1;
  std::unique_ptr<KvCache> cache;
  std::vector<float> q, k, v;  // the batch: [n][heads * D], [n][kv_heads * D] x2
};

// heads / kv_heads / head_dim / window as given; the cache holds `pos` earlier positions of
// random keys and values (only the last `window` survive in a local layer's ring).
inline AttentionCase make_case(int heads, int kv_heads, int head_dim, int window, bool global, int64_t pos, int n,
                               DType kv_element, uint32_t seed) {
  AttentionCase a;
  Gemma3Config& c = a.config;
  c.num_layers = 2;
  c.num_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.hidden_size = heads * head_dim;
  c.sliding_window = window;
  c.query_pre_attn_scalar = float(head_dim);
  c.layer_is_global = {false, true};
  a.layer = global ? 1 : 0;
  a.pos = pos;
  a.n = n;
  a.cache = std::make_unique<KvCache>(c, int(pos + n), kv_element);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t row = int64_t(kv_heads) * head_dim;
  std::vector<float> k(row), v(row);
  for (int64_t p = 0; p < pos; ++p) {
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    store_kv(c, a.layer, *a.cache, k.data(), v.data(), p, 1);
  }
  a.q.resize(size_t(n) * heads * head_dim);
  a.k.resize(size_t(n) * row);
  a.v.resize(size_t(n) * row);
  // Queries scaled up so the softmax is peaked, as in a trained model, not flat.
  for (float& x : a.q) x = 3.0f * normal(rng);
  for (float& x : a.k) x = normal(rng);
  for (float& x : a.v) x = normal(rng);
  return a;
}

// ||a - b|| / ||b||
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace kiln::test
