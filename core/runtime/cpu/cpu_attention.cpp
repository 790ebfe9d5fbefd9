#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/convert.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/cpu/ops.h"

namespace kiln {
namespace {

// A run of consecutive positions whose key (or value) rows sit at a fixed stride.
struct RowRun {
  int64_t first;         // position of the first row
  int64_t count;
  const uint8_t* k;      // first key row of this kv head
  const uint8_t* v;
  size_t stride;         // bytes between rows
  DType type;            // F32 (the batch, an F32 cache) or F16 (an F16 cache)
};

// The keys of positions [lo, p] for one kv head as at most three runs: the cache ring may wrap
// once, and positions from `pos` on come from the batch's own fresh rows (p may lie past the query
// inside the batch: an image's tokens see the rest of their image).
int key_runs(const KvCache& cache, int layer, int kv_head, int head_dim, const float* batch_k, const float* batch_v,
             int64_t pos, int64_t lo, int64_t p, RowRun runs[3]) {
  const int64_t row = cache.row_elements();
  const size_t elem = cache.element() == DType::F32 ? 4 : 2;
  const int64_t slots = cache.slot_count(layer);
  const int64_t off = int64_t(kv_head) * head_dim;
  int n = 0;
  for (int64_t j = lo; j <= std::min(p, pos - 1);) {  // cached positions, split where the ring wraps
    const int64_t s = j % slots;
    const int64_t count = std::min(std::min(p, pos - 1) - j + 1, slots - s);
    runs[n++] = {j, count, cache.keys(layer) + (s * row + off) * elem, cache.values(layer) + (s * row + off) * elem,
                 size_t(row) * elem, cache.element()};
    j += count;
  }
  const int64_t first = std::max(lo, pos);
  if (first <= p)
    runs[n++] = {first, p - first + 1, reinterpret_cast<const uint8_t*>(batch_k + (first - pos) * row + off),
                 reinterpret_cast<const uint8_t*>(batch_v + (first - pos) * row + off), size_t(row) * 4, DType::F32};
  return n;
}

}  // namespace

namespace {

// One query head of token t of a batch at positions [pos, ...): scores against the keys the query
// sees (cache, then the batch's own rows), softmax, the weighted sum of values into out[head_dim].
// `span`: the bidirectional span holding the query, if any (count 0: none).
void attend_head(const MatmulKernels& kernels, const Gemma3Config& c, int layer, const KvCache& cache,
                 const float* q, const float* k, const float* v, int64_t pos, int t, int h, float* out,
                 std::vector<float>& scores, BidirectionalSpan span = {}) {
  const bool global = c.is_global(layer);
  const int D = c.head_dim;
  const int heads = c.num_heads;
  const int group = c.num_heads / c.num_kv_heads;
  const float scale = 1.0f / std::sqrt(c.query_pre_attn_scalar);
  // A local layer's query sees the `window` positions ending at itself; one inside a span also
  // sees the rest of the span after it. The window still bounds what it sees before it, on local
  // layers too (transformers 5: (causal or same image) and window), so a span longer than the
  // window is not seen whole there: the fixture's logits agree only this way.
  int64_t lo = global ? 0 : std::max<int64_t>(0, pos + t - c.sliding_window + 1);
  int64_t p = pos + t;
  if (span.count > 0) p = std::max(p, span.first + span.count - 1);
  RowRun runs[3];
  const int count = key_runs(cache, layer, h / group, D, k, v, pos, lo, p, runs);
  const float* qv = q + int64_t(t) * heads * D + int64_t(h) * D;
  scores.resize(p - lo + 1);
  for (int r = 0; r < count; ++r)
    kernels.dot_rows[int(runs[r].type)](runs[r].k, runs[r].stride, runs[r].count, D, qv,
                                        scores.data() + (runs[r].first - lo));
  const OpKernels& ops = kernels.ops;
  ops.scale_softcap(scores.data(), int64_t(scores.size()), scale, c.attn_logit_softcapping);
  ops.softmax(scores.data(), int64_t(scores.size()));
  std::fill(out, out + D, 0.0f);
  for (int r = 0; r < count; ++r)  // F16 value rows are converted inside the multiply-adds
    ops.accumulate_rows(runs[r].v, runs[r].stride, runs[r].type, runs[r].count, scores.data() + (runs[r].first - lo),
                        D, out);
}

}  // namespace

void attention_batch(const MatmulKernels& kernels, const Gemma3Config& c, int layer, const KvCache& cache,
                     const float* q, const float* k, const float* v, int64_t pos, int n, float* att, ThreadPool& pool,
                     std::span<const BidirectionalSpan> spans) {
  const int D = c.head_dim;
  const int heads = c.num_heads;
  // Short contexts are cheaper on one thread than the wake-up of the others: aim for chunks of
  // at least ~64k multiply-adds.
  const int64_t keys = c.is_global(layer) ? pos + n : std::min<int64_t>(c.sliding_window, pos + n);
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, keys * D));
  pool.parallel_for(int64_t(n) * heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int t = int(item / heads);
      const int h = int(item % heads);
      BidirectionalSpan within;
      for (const BidirectionalSpan& s : spans)
        if (pos + t >= s.first && pos + t < s.first + s.count) within = s;
      attend_head(kernels, c, layer, cache, q, k, v, pos, t, h, att + int64_t(t) * heads * D + int64_t(h) * D, scores,
                  within);
    }
  }, grain);
}

void attention_sequences(const MatmulKernels& kernels, const Gemma3Config& c, int layer,
                         std::span<const KvCache* const> caches, std::span<const int64_t> positions, const float* q,
                         const float* k, const float* v, float* att, ThreadPool& pool) {
  const int n = int(caches.size());
  const int D = c.head_dim;
  const int heads = c.num_heads;
  const int64_t q_dim = int64_t(heads) * D, kv_dim = int64_t(c.num_kv_heads) * D;
  int64_t longest = 1;
  for (int64_t p : positions) longest = std::max(longest, c.is_global(layer) ? p + 1 : std::min<int64_t>(c.sliding_window, p + 1));
  const int64_t grain = std::max<int64_t>(1, 65536 / (longest * D));
  pool.parallel_for(int64_t(n) * heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int i = int(item / heads);
      const int h = int(item % heads);
      // Item i is a batch of one token at positions[i] over its own cache: its rows of q, k and v.
      attend_head(kernels, c, layer, *caches[i], q + i * q_dim, k + i * kv_dim, v + i * kv_dim, positions[i], 0, h,
                  att + i * q_dim + int64_t(h) * D, scores);
    }
  }, grain);
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
