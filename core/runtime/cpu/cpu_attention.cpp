#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/convert.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/ops.h"

namespace kiln {
namespace {

inline float to_float(float v) { return v; }
inline float to_float(uint16_t h) { return fp16_to_float(h); }

// Rows of one kv head at a position: from the batch (float) or the cache (T).
template <typename T>
struct KeyValueRows {
  const Gemma3Config& c;
  const T* cache_k;
  const T* cache_v;
  const float* batch_k;
  const float* batch_v;
  int64_t pos;       // first position of the batch
  int slots;
  bool global;
  int64_t row;       // kv_heads * head_dim

  template <typename F>
  void for_key(int64_t j, int kv_head, F&& f) const {
    const int64_t off = int64_t(kv_head) * c.head_dim;
    if (j >= pos) {
      f(batch_k + (j - pos) * row + off, batch_v + (j - pos) * row + off);
    } else {
      const int64_t s = j % slots;
      f(cache_k + s * row + off, cache_v + s * row + off);
    }
  }
};

template <typename T>
void attention_typed(const Gemma3Config& c, int layer, const KvCache& cache, const float* q, const float* k,
                     const float* v, int64_t pos, int n, float* att, ThreadPool& pool) {
  const bool global = c.is_global(layer);
  const int D = c.head_dim;
  const int heads = c.num_heads;
  const int group = c.num_heads / c.num_kv_heads;
  const float scale = 1.0f / std::sqrt(c.query_pre_attn_scalar);
  const KeyValueRows<T> rows{c,   reinterpret_cast<const T*>(cache.keys(layer)),
                             reinterpret_cast<const T*>(cache.values(layer)),
                             k,   v,
                             pos, cache.slot_count(layer),
                             global, cache.row_elements()};
  // Short contexts are cheaper on one thread than the wake-up of the others: aim for chunks of
  // at least ~64k multiply-adds.
  const int64_t keys = global ? pos + n : std::min<int64_t>(c.sliding_window, pos + n);
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, keys * D));
  pool.parallel_for(int64_t(n) * heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int t = int(item / heads);
      const int h = int(item % heads);
      const int kv_head = h / group;
      const int64_t p = pos + t;
      // A local layer's query sees the `window` positions ending at itself.
      const int64_t lo = global ? 0 : std::max<int64_t>(0, p - c.sliding_window + 1);
      const int64_t count = p - lo + 1;
      const float* qv = q + int64_t(t) * heads * D + int64_t(h) * D;
      scores.resize(count);
      for (int64_t j = lo; j <= p; ++j)
        rows.for_key(j, kv_head, [&](const auto* key, const auto*) {
          float dot = 0;
          for (int d = 0; d < D; ++d) dot += qv[d] * to_float(key[d]);
          scores[j - lo] = dot * scale;
        });
      if (c.attn_logit_softcapping > 0)
        for (float& s : scores) s = c.attn_logit_softcapping * std::tanh(s / c.attn_logit_softcapping);
      softmax(scores.data(), count);
      float* out = att + int64_t(t) * heads * D + int64_t(h) * D;
      std::fill(out, out + D, 0.0f);
      for (int64_t j = lo; j <= p; ++j)
        rows.for_key(j, kv_head, [&](const auto*, const auto* value) {
          const float w = scores[j - lo];
          for (int d = 0; d < D; ++d) out[d] += w * to_float(value[d]);
        });
    }
  }, grain);
}

}  // namespace

void attention_batch(const Gemma3Config& c, int layer, const KvCache& cache, const float* q, const float* k,
                     const float* v, int64_t pos, int n, float* att, ThreadPool& pool) {
  if (cache.element() == DType::F32)
    attention_typed<float>(c, layer, cache, q, k, v, pos, n, att, pool);
  else
    attention_typed<uint16_t>(c, layer, cache, q, k, v, pos, n, att, pool);
}

void store_kv(const Gemma3Config& c, int layer, KvCache& cache, const float* k, const float* v, int64_t pos, int n) {
  const int64_t row = cache.row_elements();
  // Only the last `slots` positions of the batch survive in a ring; skip the rest.
  const int first = std::max(0, n - cache.slot_count(layer));
  for (int t = first; t < n; ++t) {
    const int64_t s = cache.slot_of(layer, pos + t);
    if (cache.element() == DType::F32) {
      std::memcpy(reinterpret_cast<float*>(cache.keys(layer)) + s * row, k + int64_t(t) * row, row * 4);
      std::memcpy(reinterpret_cast<float*>(cache.values(layer)) + s * row, v + int64_t(t) * row, row * 4);
    } else {
      quantize_row(DType::F16, k + int64_t(t) * row, row, cache.keys(layer) + s * row * 2);
      quantize_row(DType::F16, v + int64_t(t) * row, row, cache.values(layer) + s * row * 2);
    }
  }
}

}  // namespace kiln
