#include "runtime/cpu/cpu_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kiln/hardware.h"
#include "kiln/types.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/cpu/ops.h"

namespace kiln {

void RunState::reserve(const Gemma3Config& c, int n) {
  if (n <= capacity) return;
  capacity = n;
  const int64_t hidden = c.hidden_size, q_dim = int64_t(c.num_heads) * c.head_dim,
                kv_dim = int64_t(c.num_kv_heads) * c.head_dim, ffn = c.intermediate_size;
  x.resize(n * hidden);
  xn.resize(n * hidden);
  proj.resize(n * hidden);
  q.resize(n * q_dim);
  att.resize(n * q_dim);
  k.resize(n * kv_dim);
  v.resize(n * kv_dim);
  gate.resize(n * ffn);
  up.resize(n * ffn);
}

namespace {

// Prefill runs in chunks of this many tokens so scratch memory stays bounded for long prompts.
constexpr int kMaxBatch = 256;
// Positions local layers' rings hold beyond the window: a chat's follow-up whose rendering of the
// last answer differs from the tokens generated (a trimmed space, another split) goes back that far
// and keeps everything before (for the 27B shape, 53 MB of fp16 cache).
constexpr int kSpareRing = 128;

class CpuBackend final : public Backend {
 public:
  CpuBackend(std::shared_ptr<const Gemma3Weights> weights, const CpuOptions& options)
      : w_(std::move(weights)),
        c_(w_->config),
        pool_(options.threads),
        kv_element_(options.kv_element),
        attention_(c_, options.attention, options.attention_routing, options.context_length,
                   options.kv_element == DType::F16, pool_),
        integer_activations_(options.integer_activations),
        forced_kernels_(options.matmul_kernels != nullptr),
        kernels_(options.matmul_kernels ? *options.matmul_kernels : best_matmul_kernels()),
        ops_(kernels_.ops) {
    seqs_.push_back({std::make_unique<KvCache>(c_, options.context_length, options.kv_element, kSpareRing), 0});
  }

  std::string name() const override {
    const std::string routed = attention_.describe();
    return "cpu (" + std::to_string(pool_.size()) + " threads" + (routed.empty() ? "" : ", " + routed) + ")";
  }
  int context_length() const override { return seqs_[0].cache->context(); }
  uint64_t kv_cache_bytes() const override { return seqs_[0].cache->bytes() * seqs_.size(); }
  int sequences() const override { return int(seqs_.size()); }
  int rewind_limit() const override { return seqs_[0].cache->rewind_limit(); }

  int set_sequences(int count) override {
    count = std::max(1, count);
    if (count > int(seqs_.size())) {
      const uint64_t more = seqs_[0].cache->bytes() * uint64_t(count - int(seqs_.size()));
      if (const uint64_t available = available_memory_bytes(); available > 0 && more > available)
        throw Error(std::to_string(count) + " sequences need " + std::to_string(more >> 20) +
                    " MiB more of KV cache but only " + std::to_string(available >> 20) + " MiB of memory is available");
    }
    while (int(seqs_.size()) > count) seqs_.pop_back();
    while (int(seqs_.size()) < count)
      seqs_.push_back({std::make_unique<KvCache>(c_, context_length(), kv_element_, kSpareRing), 0});
    return count;
  }
  void set_profiling(bool enabled) override {
    profile_.set_enabled(enabled);
    routed_profile_.set_enabled(enabled);
  }
  std::vector<OpTiming> take_profile() override {
    std::vector<OpTiming> out = profile_.take("cpu");
    for (OpTiming& t : routed_profile_.take(routed_device_)) out.push_back(std::move(t));
    return out;
  }
  std::vector<std::pair<std::string, double>> counters() const override { return attention_.counters(); }
  std::vector<std::string> take_notes() override { return attention_.take_notes(); }

  void forward(std::span<const int32_t> tokens, int pos, bool all_logits, float* logits) override {
    forward_sequence(0, tokens, pos, all_logits, logits);
  }

  void forward_sequence(int sequence, std::span<const int32_t> tokens, int pos, bool all_logits,
                        float* logits) override {
    forward_embedded(sequence, tokens, pos, {}, all_logits, logits);
  }

  void forward_embedded(int sequence, std::span<const int32_t> given, int pos, std::span<const EmbeddingSpan> spans,
                        bool all_logits, float* logits) override {
    const int n = int(given.size());
    if (n == 0) throw Error("forward: no tokens");
    // Span positions take embeddings: their ids are not looked up (an image token id may lie past a
    // GGUF's embedding rows).
    std::vector<int32_t> ids;
    std::span<const int32_t> tokens = given;
    if (!spans.empty()) {
      check_spans(spans, pos, n);
      ids.assign(given.begin(), given.end());
      for (const EmbeddingSpan& e : spans) std::fill_n(ids.begin() + (e.pos - pos), e.count, 0);
      tokens = ids;
    }
    check_step(sequence, pos, n, tokens);
    Sequence& seq = seqs_[size_t(sequence)];
    current_ = seq.cache.get();
    attention_.begin_request();
    for (int start = 0; start < n;) {
      int len = std::min(kMaxBatch, n - start);
      // A span goes through in one batch (its tokens attend to each other): the chunk ends before
      // it, or, where it starts the chunk, after it.
      for (const EmbeddingSpan& e : spans) {
        const int first = e.pos - pos, end = first + e.count;
        if (first < start + len && end > start + len) len = first > start ? first - start : end - start;
      }
      const bool last_chunk = start + len == n;
      float* out = all_logits ? logits + int64_t(start) * c_.vocab_size : (last_chunk ? logits : nullptr);
      forward_chunk(tokens.subspan(start, len), pos + start, all_logits, out, spans);
      seq.filled = pos + start + len;
      start += len;
    }
  }

  // One token of each item's sequence through every layer together: the matrices see n tokens (each
  // weight read once for all), attention runs per item on its own cache and position.
  void forward_sequences(std::span<const SequenceToken> items, int vocab, float* logits) override {
    const int n = int(items.size());
    if (n == 0) return;
    if (vocab != c_.vocab_size) throw Error("forward_sequences: logits rows of " + std::to_string(vocab) + " floats");
    if (n > kMaxBatch) throw Error("forward_sequences: more than " + std::to_string(kMaxBatch) + " sequences in a step");
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    step_caches_.assign(size_t(n), nullptr);
    step_cache_views_.assign(size_t(n), nullptr);
    step_positions_.assign(size_t(n), 0);
    for (int i = 0; i < n; ++i) {
      const SequenceToken& item = items[size_t(i)];
      check_step(item.sequence, item.pos, 1, std::span<const int32_t>(&item.token, 1));
      for (int j = 0; j < i; ++j)
        if (items[size_t(j)].sequence == item.sequence)
          throw Error("forward_sequences: sequence " + std::to_string(item.sequence) + " appears twice");
      tokens[size_t(i)] = item.token;
      step_caches_[size_t(i)] = seqs_[size_t(item.sequence)].cache.get();
      step_cache_views_[size_t(i)] = step_caches_[size_t(i)];
      step_positions_[size_t(i)] = item.pos;
    }
    s_.reserve(c_, n);
    embed(tokens);
    rope_angles_for(step_positions_);
    for (int layer = 0; layer < c_.num_layers; ++layer) {
      attention_block(layer, 0, n, /*per_sequence=*/true);
      mlp_block(layer, n);
    }
    output_logits(n, true, logits);
    for (const SequenceToken& item : items) seqs_[size_t(item.sequence)].filled = item.pos + 1;
  }

 private:
  struct Sequence {
    std::unique_ptr<KvCache> cache;
    int filled = 0;  // positions [0, filled) are in the cache
  };

  void check_step(int sequence, int pos, int n, std::span<const int32_t> tokens) const {
    if (sequence < 0 || sequence >= int(seqs_.size()))
      throw Error("forward: sequence " + std::to_string(sequence) + " of " + std::to_string(seqs_.size()));
    const int filled = seqs_[size_t(sequence)].filled;
    if (pos < 0 || pos > filled || (pos != 0 && pos < filled - rewind_limit()))
      throw Error("forward: position " + std::to_string(pos) + " cannot follow a cache of " + std::to_string(filled) +
                  " positions");
    if (int64_t(pos) + n > context_length())
      throw Error("the context is full: " + std::to_string(pos + n) + " tokens > context length " +
                  std::to_string(context_length()));
    for (int32_t t : tokens)
      if (t < 0 || t >= c_.vocab_size)
        throw Error("token id " + std::to_string(t) + " is outside the vocabulary of " + std::to_string(c_.vocab_size));
  }

  static void check_spans(std::span<const EmbeddingSpan> spans, int pos, int n) {
    int64_t after = pos;
    for (const EmbeddingSpan& e : spans) {
      if (e.count <= 0 || !e.rows || e.pos < after || int64_t(e.pos) + e.count > int64_t(pos) + n)
        throw Error("forward: embedding span at " + std::to_string(e.pos) + " (+" + std::to_string(e.count) +
                    ") is not inside the batch at " + std::to_string(pos) + " (+" + std::to_string(n) +
                    ") after the spans before it");
      after = int64_t(e.pos) + e.count;
    }
  }

  // One batch of tokens through every layer; logits for all of them or only the last. The spans
  // of the call that lie in this batch replace their positions' embeddings.
  void forward_chunk(std::span<const int32_t> tokens, int64_t pos, bool all_logits, float* logits,
                     std::span<const EmbeddingSpan> spans = {}) {
    const int n = int(tokens.size());
    s_.reserve(c_, n);
    embed(tokens);
    chunk_spans_.clear();
    for (const EmbeddingSpan& e : spans) {
      if (e.pos < pos || e.pos >= pos + n) continue;
      std::copy_n(e.rows, int64_t(e.count) * c_.hidden_size, &s_.x[(e.pos - pos) * c_.hidden_size]);
      chunk_spans_.push_back({e.pos, e.count});
    }
    chunk_positions_.resize(size_t(n));
    for (int t = 0; t < n; ++t) chunk_positions_[size_t(t)] = pos + t;
    rope_angles_for(chunk_positions_);
    for (int layer = 0; layer < c_.num_layers; ++layer) {
      attention_block(layer, pos, n);
      mlp_block(layer, n);
    }
    chunk_spans_.clear();
    if (logits) output_logits(n, all_logits, logits);
  }

  // x = embed[token] * sqrt(hidden)
  void embed(std::span<const int32_t> tokens) {
    OpProfile::Scope timer(profile_, "embedding", -1);
    const int64_t hidden = c_.hidden_size;
    const float normalizer = std::sqrt(float(hidden));
    for (size_t t = 0; t < tokens.size(); ++t) {
      matrix_row(w_->embed, tokens[t], &s_.x[t * hidden]);
      ops_.scale(&s_.x[t * hidden], hidden, normalizer);
    }
  }

  // RoPE's cos and sin for each token of a batch at positions[t], for local (0) and global (1)
  // layers: every layer of a kind rotates by the same angles, so they are computed once a batch.
  void rope_angles_for(std::span<const int64_t> positions) {
    const int half = c_.head_dim / 2;
    const size_t n = positions.size();
    for (int global = 0; global < 2; ++global) {
      const float base = global ? c_.rope_theta : c_.rope_local_base_freq;
      const float scaling = global ? c_.rope_scaling_factor : 1.0f;
      rope_cos_[global].resize(n * half);
      rope_sin_[global].resize(n * half);
      for (size_t t = 0; t < n; ++t)
        rope_angles(c_.head_dim, positions[t], base, scaling, &rope_cos_[global][t * half],
                    &rope_sin_[global][t * half]);
    }
  }

  // x = x + post_attn_norm(o_proj(attention(rope(norm(q)), rope(norm(k)), v)))
  // per_sequence: token t is a step of its own sequence (step_caches_[t] at step_positions_[t]);
  // else the n tokens are positions [pos, pos + n) of current_.
  void attention_block(int layer, int64_t pos, int n, bool per_sequence = false) {
    const LayerWeights& l = w_->layers[layer];
    norm_rows(s_.x.data(), l.input_norm.data(), n, s_.xn.data(), layer);
    project(l.wq, s_.xn.data(), n, s_.q.data(), layer);
    project(l.wk, s_.xn.data(), n, s_.k.data(), layer);
    project(l.wv, s_.xn.data(), n, s_.v.data(), layer);
    {
      OpProfile::Scope timer(profile_, "qk_norm_rope", layer);
      const int global = c_.is_global(layer) ? 1 : 0;
      const int D = c_.head_dim, half = D / 2;
      for (int t = 0; t < n; ++t) {
        float* q = &s_.q[int64_t(t) * c_.num_heads * D];
        float* k = &s_.k[int64_t(t) * c_.num_kv_heads * D];
        for (int h = 0; h < c_.num_heads; ++h)
          ops_.rms_norm(q + h * D, l.q_norm.data(), D, c_.rms_norm_eps, q + h * D);
        for (int h = 0; h < c_.num_kv_heads; ++h)
          ops_.rms_norm(k + h * D, l.k_norm.data(), D, c_.rms_norm_eps, k + h * D);
        const float* cos = &rope_cos_[global][size_t(t) * half];
        const float* sin = &rope_sin_[global][size_t(t) * half];
        ops_.rope_rotate(q, c_.num_heads, D, cos, sin);
        ops_.rope_rotate(k, c_.num_kv_heads, D, cos, sin);
      }
    }
    if (per_sequence) {
      // Several sequences' decode steps: the CPU's attention, each on its own cache.
      OpProfile::Scope timer(profile_, "attention", layer);
      attention_sequences(kernels_, c_, layer, step_cache_views_, step_positions_, s_.q.data(), s_.k.data(),
                          s_.v.data(), s_.att.data(), pool_);
      const int64_t kv_dim = int64_t(c_.num_kv_heads) * c_.head_dim;
      for (int t = 0; t < n; ++t)
        store_kv(c_, layer, *step_caches_[size_t(t)], s_.k.data() + t * kv_dim, s_.v.data() + t * kv_dim,
                 step_positions_[size_t(t)], 1);
    } else {
      // Timed under the device that ran it: the NPU path may fall back to the CPU mid-request.
      const auto start = profile_.enabled() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      // Spans of image tokens need their own mask: the CPU's attention runs them.
      AttentionDevice ran = AttentionDevice::Cpu;
      if (chunk_spans_.empty())
        ran = attention_.run(kernels_, layer, *current_, s_.q.data(), s_.k.data(), s_.v.data(), pos, n,
                             s_.att.data());
      else
        attention_batch(kernels_, c_, layer, *current_, s_.q.data(), s_.k.data(), s_.v.data(), pos, n, s_.att.data(),
                        pool_, chunk_spans_);
      store_kv(c_, layer, *current_, s_.k.data(), s_.v.data(), pos, n);
      if (profile_.enabled()) {
        const double micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
        if (ran == AttentionDevice::Cpu) {
          profile_.add("attention", layer, micros);
        } else {
          routed_device_ = to_string(ran);
          routed_profile_.add("attention", layer, micros);
        }
      }
    }
    project(l.wo, s_.att.data(), n, s_.proj.data(), layer);
    norm_rows(s_.proj.data(), l.post_attn_norm.data(), n, s_.proj.data(), layer);
    ops_.add_in_place(s_.x.data(), s_.proj.data(), int64_t(n) * c_.hidden_size);
  }

  // x = x + post_ffn_norm(down(gelu_tanh(gate(h)) * up(h))), h = pre_ffn_norm(x)
  void mlp_block(int layer, int n) {
    const LayerWeights& l = w_->layers[layer];
    norm_rows(s_.x.data(), l.pre_ffn_norm.data(), n, s_.xn.data(), layer);
    project(l.w_gate, s_.xn.data(), n, s_.gate.data(), layer);
    project(l.w_up, s_.xn.data(), n, s_.up.data(), layer);
    {
      OpProfile::Scope timer(profile_, "gelu_mul", layer);
      float* gate = s_.gate.data();
      const float* up = s_.up.data();
      const OpKernels::GeluTanhMul gelu = ops_.gelu_tanh_mul;
      pool_.parallel_for(int64_t(n) * c_.intermediate_size, [&](int64_t begin, int64_t end) {
        gelu(gate + begin, up + begin, end - begin, gate + begin);
      }, 16384);
    }
    project(l.w_down, s_.gate.data(), n, s_.proj.data(), layer);
    norm_rows(s_.proj.data(), l.post_ffn_norm.data(), n, s_.proj.data(), layer);
    ops_.add_in_place(s_.x.data(), s_.proj.data(), int64_t(n) * c_.hidden_size);
  }

  // logits = final_norm(x) . embed^T (the embedding is tied)
  void output_logits(int n, bool all_logits, float* logits) {
    const int64_t hidden = c_.hidden_size;
    const int first = all_logits ? 0 : n - 1;
    const int rows = n - first;
    norm_rows(&s_.x[first * hidden], w_->final_norm.data(), rows, s_.xn.data(), -1);
    project(w_->embed, s_.xn.data(), rows, logits, -1);
    if (c_.final_logit_softcapping > 0)
      ops_.scale_softcap(logits, int64_t(rows) * c_.vocab_size, 1.0f, c_.final_logit_softcapping);
  }

  void norm_rows(const float* x, const float* weight, int n, float* out, int layer) {
    OpProfile::Scope timer(profile_, "rms_norm", layer);
    const int64_t hidden = c_.hidden_size;
    for (int t = 0; t < n; ++t) ops_.rms_norm(x + t * hidden, weight, hidden, c_.rms_norm_eps, out + t * hidden);
  }

  void project(const Matrix& w, const float* x, int n, float* y, int layer) {
    OpProfile::Scope timer(profile_, "matmul", layer);
    if (forced_kernels_ || integer_activations_) matmul_with(kernels_, w, x, n, y, pool_);
    else matmul_float_activations(w, x, n, y, pool_);
  }

  std::shared_ptr<const Gemma3Weights> w_;
  const Gemma3Config& c_;
  ThreadPool pool_;
  DType kv_element_;
  std::vector<Sequence> seqs_;        // [0] is forward()'s
  KvCache* current_ = nullptr;        // the sequence forward_sequence() runs
  std::vector<KvCache*> step_caches_;  // forward_sequences(): [n] each item's cache
  std::vector<const KvCache*> step_cache_views_;  // the same, read-only for attention
  std::vector<int64_t> step_positions_;      // [n] each item's position
  std::vector<BidirectionalSpan> chunk_spans_;  // forward_chunk(): the image spans of its batch
  std::vector<int64_t> chunk_positions_;        // forward_chunk(): [n] the batch's positions
  std::vector<float> rope_cos_[2], rope_sin_[2];  // [local, global][n][head_dim / 2], rope_angles_for()
  RunState s_;
  OpProfile profile_;
  AttentionRouter attention_;
  bool integer_activations_;  // CpuOptions::integer_activations
  bool forced_kernels_;       // CpuOptions::matmul_kernels was given
  const MatmulKernels kernels_;  // that set, or the fastest this CPU runs: every loop of the forward pass
  const OpKernels& ops_;         // kernels_.ops
  OpProfile routed_profile_;  // attention that ran on routed_device_ ("npu", "npu-emulator")
  std::string routed_device_ = "npu";
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<const Gemma3Weights> weights, const CpuOptions& options) {
  return std::make_unique<CpuBackend>(std::move(weights), options);
}

}  // namespace kiln
