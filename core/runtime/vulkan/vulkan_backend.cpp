// The Vulkan Backend: a device, its plan (kernel_plan.h), the model uploaded once, one command
// sequence. forward() writes the token ids, submits the whole pass once per batch and reads the
// logits back. Decode steps are recorded one step ahead, while the GPU runs the current one, and
// ordered by stage flags instead of barriers where the plan says so (CommandSequence); a step whose
// flags gave up is run again with barriers, and so are all later ones. Images' soft tokens
// (forward_embedded) take their own batches, recorded on the spot (run_embedded). Several sequences
// (the server's slots) each have their own KV cache (ModelGpu::sequences); a decode step of several
// runs their tokens as one batch (forward_sequences, record_items).
#include "runtime/vulkan_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "kiln/types.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan/model_gpu.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/sequence.h"

namespace kiln {
namespace {

bool weights_are_f32(const Gemma3Weights& w) {
  if (w.embed.type != DType::F32) return false;
  for (const LayerWeights& l : w.layers)
    if (l.wq.type != DType::F32 || l.w_down.type != DType::F32) return false;
  return true;
}

class VulkanBackend final : public Backend {
 public:
  // release: the same weights, freed matrix by matrix as they reach the device (nullptr: kept).
  VulkanBackend(std::shared_ptr<const Gemma3Weights> weights, const VulkanOptions& options,
                Gemma3Weights* release = nullptr) {
    if (!weights) throw Error("Vulkan: no weights given");
    auto instance = std::make_shared<vk::Instance>();
    const int index = vk::choose_device(instance->devices(), options.device, options.allow_cpu_device);
    device_ = std::make_unique<vk::Device>(instance, index);
    // fp16 keys and values halve the cache; F32 weights keep it exact, like the CPU reference.
    const bool f16_kv = options.f16_kv && !weights_are_f32(*weights);
    const vk::KernelPlan plan = vk::plan_for(device_->info(), vk::parse_tuning(options.tuning));
    model_ = std::make_unique<vk::ModelGpu>(*device_, *weights, options.context_length, f16_kv, plan, release);
    sequence_ = std::make_unique<vk::CommandSequence>(*device_, vk::max_dispatches_per_forward(*model_),
                                                      vk::SequenceOptions{plan.fence_poll, plan.stage_barrier_before});
    stage_flags_ = plan.stage_flags;
    run_ahead_ = model_->max_batch >= 2 && plan.run_ahead;
    // Tests: the first flagged step's second stage waits for a workgroup that never comes.
    if (plan.stage_flags_test_give_up) sequence_->give_up_once();
    warm_up(plan.warmup_tokens);
    after_load_ = device_->counters();
  }

  // A CPU implementation (lavapipe, SwiftShader) runs only when chosen by hand: say what it is.
  std::string name() const override {
    const auto& d = device_->info();
    return "vulkan (" + d.report.name + (d.cpu_implementation ? ", " + std::string(kSoftwareVulkan) : "") + ")";
  }
  int context_length() const override { return model_->context; }
  // Going back r positions leaves positions past the new end stale in a local layer's ring, up to
  // the one a step run ahead wrote; the window before the new end must not have been overwritten by
  // them: r <= cache_slots - window (max_batch - 1 where the ring is shorter than the context).
  int rewind_limit() const override {
    int limit = model_->context;
    for (const vk::LayerGpu& l : model_->layers)
      if (l.cache_slots < model_->context) limit = std::min(limit, l.cache_slots - model_->config.sliding_window);
    return std::max(1, limit);
  }
  uint64_t kv_cache_bytes() const override { return model_->kv_bytes * model_->sequences.size(); }
  int sequences() const override { return int(model_->sequences.size()); }

  // Nothing may be running on a cache that goes, nor queued or recorded for one.
  int set_sequences(int count) override {
    count = std::max(1, count);
    drop_ahead();
    if (prepared_ >= 0) sequence_->discard(prepared_);
    prepared_ = -1;
    discard_prepared_items();
    device_->wait_idle();
    model_->set_sequences(count);
    filled_.resize(size_t(count), 0);
    return count;
  }
  void set_profiling(bool enabled) override { profiling_ = enabled; }
  // As decided at load; the counter stage_flags says whether the flags later gave up.
  std::optional<GpuPlan> gpu_plan() const override { return model_->summary(); }
  std::vector<OpTiming> take_profile() override { return sequence_->take_profile(); }

  std::vector<std::pair<std::string, double>> counters() const override {
    const double tokens = double(std::max<uint64_t>(decode_tokens_, 1));
    const vk::Counters& now = device_->counters();
    return {
        {"allocations_during_decode", double(decode_.memory_allocations + decode_.buffers_created)},
        {"descriptor_set_allocations_during_decode", double(decode_.descriptor_sets_allocated)},
        {"pipeline_creations_during_decode", double(decode_.pipelines_created)},
        // Kernels by name since load: only soft tokens' first batch and set_sequences of 2 or more.
        {"pipeline_lookups_after_load", double(now.pipeline_lookups - after_load_.pipeline_lookups)},
        {"submits_per_token", decode_tokens_ ? double(decode_.submits) / tokens : 0.0},
        {"decode_tokens", double(decode_tokens_)},
        {"allocations_after_load", double(now.memory_allocations + now.buffers_created - after_load_.memory_allocations -
                                          after_load_.buffers_created)},
        {"weight_bytes", double(model_->weights.bytes)},
        {"kv_cache_bytes", double(kv_cache_bytes())},
        {"sequences", double(model_->sequences.size())},
        {"sequence_steps", double(sequence_steps_)},  // forward_sequences() recordings of 2 or more items
        {"max_step_items", double(model_->items.max_items)},
        {"max_batch", double(model_->max_batch)},
        {"dispatches_last_call", double(last_dispatches_)},
        {"stage_flags", stage_flags_ ? 1.0 : 0.0},
        {"stage_flag_fallbacks", double(stage_flag_fallbacks_)},
        {"wide_norm", model_->kernels.wide_norm ? 1.0 : 0.0},
        {"early_part_layers", double(model_->early_part_layers)},
    };
  }

  void forward(std::span<const int32_t> tokens, int pos, bool all_logits, float* logits) override {
    forward_sequence(0, tokens, pos, all_logits, logits);
  }

  void forward_sequence(int sequence, std::span<const int32_t> tokens, int pos, bool all_logits,
                        float* logits) override {
    check_sequence(sequence);
    run(tokens, pos, all_logits ? vk::ForwardOutput::AllLogits : vk::ForwardOutput::LastLogits, logits, {}, sequence);
  }

  // One item: the one-token path (its own buffers, stage flags where the plan has them). More: at
  // most max_items a recording, each one submit; positions follow forward()'s rules per sequence.
  // While the GPU runs a step, the host records the likely next one (the same sequences, each one
  // position on), as run() does for one sequence.
  void forward_sequences(std::span<const SequenceToken> items, int vocab, float* logits) override {
    const Gemma3Config& c = model_->config;
    if (items.empty()) return;
    if (vocab != c.vocab_size) throw Error("forward_sequences: logits rows of " + std::to_string(vocab) + " floats");
    for (size_t i = 0; i < items.size(); ++i) {
      const SequenceToken& item = items[i];
      check_sequence(item.sequence);
      check_position(item.sequence, item.pos, 1);
      if (item.token < 0 || item.token >= c.vocab_size)
        throw Error("token id " + std::to_string(item.token) + " is outside the vocabulary of " +
                    std::to_string(c.vocab_size));
      for (size_t j = 0; j < i; ++j)
        if (items[j].sequence == item.sequence)
          throw Error("forward_sequences: sequence " + std::to_string(item.sequence) + " appears twice");
    }
    if (items.size() == 1 || model_->items.max_items < 2) {
      for (size_t i = 0; i < items.size(); ++i)
        forward_sequence(items[i].sequence, std::span<const int32_t>(&items[i].token, 1), items[i].pos, false,
                         logits + i * size_t(vocab));
      return;
    }
    drop_ahead();
    if (prepared_ >= 0) sequence_->discard(prepared_);
    prepared_ = -1;
    const size_t row = size_t(vocab);
    const bool one_group = int(items.size()) <= model_->items.max_items;
    for (size_t start = 0; start < items.size();) {
      // A last group of one goes with the one before (groups of max_items - 1 and 2).
      size_t len = std::min(items.size() - start, size_t(model_->items.max_items));
      if (items.size() - start - len == 1) --len;
      std::vector<vk::StepItem> step(len);
      auto* ids = reinterpret_cast<int32_t*>(model_->tokens.mapped);
      for (size_t i = 0; i < len; ++i) {
        step[i] = {items[start + i].sequence, items[start + i].pos};
        ids[i] = items[start + i].token;
      }
      int frame = take_prepared_items(step);
      if (frame < 0) frame = record_items(step);
      sequence_->submit(frame);
      if (one_group) prepare_items(step);
      sequence_->wait(frame);
      last_dispatches_ = sequence_->dispatches_recorded(frame);
      ++sequence_steps_;
      for (size_t i = 0; i < len; ++i) filled_[size_t(step[i].sequence)] = step[i].pos + 1;
      std::memcpy(logits + start * row, model_->logits_host.mapped, len * row * 4);
      start += len;
    }
  }

  std::optional<int32_t> forward_argmax(std::span<const int32_t> tokens, int pos) override {
    run(tokens, pos, vk::ForwardOutput::Argmax, nullptr, {}, 0);
    return last_pick_;
  }

  void forward_embedded(int sequence, std::span<const int32_t> tokens, int pos, std::span<const EmbeddingSpan> spans,
                        bool all_logits, float* logits) override {
    if (spans.empty()) return forward_sequence(sequence, tokens, pos, all_logits, logits);
    check_sequence(sequence);
    int after = pos;  // the end of the span before
    for (const EmbeddingSpan& s : spans) {
      if (s.count <= 0 || !s.rows || s.pos < after || int64_t(s.pos) + s.count > int64_t(pos) + int64_t(tokens.size()))
        throw Error("forward_embedded: image embeddings at positions " + std::to_string(s.pos) + ".." +
                    std::to_string(int64_t(s.pos) + s.count) + " are empty, out of order or outside the batch");
      after = s.pos + s.count;
      if (s.count > model_->max_batch)  // a batch holds a span whole
        throw Error("Vulkan: an image of " + std::to_string(s.count) + " tokens does not fit one batch of " +
                    std::to_string(model_->max_batch));
    }
    run(tokens, pos, all_logits ? vk::ForwardOutput::AllLogits : vk::ForwardOutput::LastLogits, logits, spans,
        sequence);
  }

 private:
  int record_items(std::span<const vk::StepItem> step) {
    const int frame = sequence_->begin(profiling_);
    vk::record_items(*model_, *sequence_, step);
    sequence_->end();
    return frame;
  }
  // The frame recorded ahead, if it is for this step.
  int take_prepared_items(const std::vector<vk::StepItem>& step) {
    const int frame = items_prepared_;
    items_prepared_ = -1;
    if (frame >= 0 && items_prepared_for_ == step && sequence_->profiling(frame) == profiling_) return frame;
    if (frame >= 0) sequence_->discard(frame);
    return -1;
  }
  void prepare_items(std::vector<vk::StepItem> next) {
    for (vk::StepItem& i : next)
      if (++i.pos >= model_->context) return;
    items_prepared_ = record_items(next);
    items_prepared_for_ = std::move(next);
  }
  // Before any other recording: a CommandSequence has three frames.
  void discard_prepared_items() {
    if (items_prepared_ >= 0) sequence_->discard(items_prepared_);
    items_prepared_ = -1;
  }

  void check_sequence(int sequence) const {
    if (sequence < 0 || sequence >= int(model_->sequences.size()))
      throw Error("forward: sequence " + std::to_string(sequence) + " of " + std::to_string(model_->sequences.size()));
  }
  // pos may go back rewind_limit() positions from the sequence's end, or to 0 (Backend::forward).
  void check_position(int sequence, int pos, int n) const {
    const int filled = filled_[size_t(sequence)];
    if (pos < 0 || pos > filled || (pos != 0 && pos < filled - rewind_limit()))
      throw Error("forward: position " + std::to_string(pos) + " cannot follow a cache of " + std::to_string(filled) +
                  " positions");
    if (int64_t(pos) + n > model_->context)
      throw Error("the context is full: " + std::to_string(pos + n) + " tokens > context length " +
                  std::to_string(model_->context));
  }

  // forward() and forward_argmax(): batches of at most max_batch tokens (logit_rows with all
  // logits), each one submit; `out` applies to the last batch (all of them for AllLogits).
  // Running ahead: a greedy decode step queues the step after it on the GPU before waiting, fed
  // by its own pick (argmax.comp writes it to tokens[0]); when the caller then asks for that token
  // at that position, the step is already running, and the GPU never idles between steps while
  // the host reads the pick and submits. A step ahead that is not asked for is waited for and
  // forgotten: it wrote only the cache position after the last one filled, which the contract of
  // forward() treats as empty (local layers' rings hold at least window + 1 positions, as
  // max_batch >= 2 gives, so it overwrote nothing a rewrite of the last position reads).
  // spans (forward_embedded): checked, in order; their positions' token ids are not read.
  void run(std::span<const int32_t> tokens, int pos, vk::ForwardOutput out, float* logits,
           std::span<const EmbeddingSpan> spans, int sequence) {
    const Gemma3Config& c = model_->config;
    const bool all_logits = out == vk::ForwardOutput::AllLogits;
    const int n = int(tokens.size());
    if (n == 0) throw Error("forward: no tokens");
    check_position(sequence, pos, n);
    discard_prepared_items();
    size_t next_span = 0;
    for (int i = 0; i < n; ++i) {
      while (next_span < spans.size() && spans[next_span].pos + spans[next_span].count <= pos + i) ++next_span;
      if (next_span < spans.size() && spans[next_span].pos <= pos + i) continue;  // a soft token
      const int32_t t = tokens[size_t(i)];
      if (t < 0 || t >= c.vocab_size)
        throw Error("token id " + std::to_string(t) + " is outside the vocabulary of " + std::to_string(c.vocab_size));
    }
    if (!spans.empty()) return run_embedded(tokens, pos, out, logits, spans, sequence);

    const vk::Counters before = device_->counters();
    const int step = all_logits ? model_->logit_rows : model_->max_batch;
    for (int start = 0; start < n; start += step) {
      const int len = std::min(step, n - start), at = pos + start;
      const bool last = start + len == n;
      const bool one = len == 1 && !all_logits;
      // Batches before the last return nothing; their logits are copied back all the same.
      const vk::ForwardOutput step_out = last || all_logits ? out : vk::ForwardOutput::LastLogits;
      const bool greedy = one && step_out == vk::ForwardOutput::Argmax;
      int frame = -1;
      if (greedy && ahead_ >= 0 && ahead_seq_ == sequence && ahead_pos_ == at && ahead_token_ == tokens[start] &&
          matches(ahead_)) {
        frame = ahead_;  // on the GPU already, fed by the step before's pick
        ahead_ = -1;
      } else {
        drop_ahead();
        std::memcpy(model_->tokens.mapped, tokens.data() + start, size_t(len) * 4);
        frame = take_prepared(sequence, at, step_out, one);
        if (frame < 0) frame = record(len, at, step_out, one && stage_flags_, {}, sequence);
        sequence_->submit(frame);
      }
      // While the GPU works, record the likely next call: one token at the next position (the
      // commands depend on the position only; the token id is read from memory when they run).
      // Greedy steps queue it on the GPU right away, and record the one after.
      if (one && at + 1 < model_->context) {
        int next = take_prepared(sequence, at + 1, step_out, true);
        if (next < 0) next = record(1, at + 1, step_out, stage_flags_, {}, sequence);
        if (greedy && run_ahead_) {
          sequence_->submit(next);
          ahead_ = next;
          ahead_seq_ = sequence;
          ahead_pos_ = at + 1;
          if (at + 2 < model_->context)
            prepare(record(1, at + 2, step_out, stage_flags_, {}, sequence), sequence, at + 2, step_out);
        } else {
          prepare(next, sequence, at + 1, step_out);
        }
      }
      sequence_->wait(frame);
      if (sequence_->abandoned(frame)) {
        drop_ahead();  // fed by garbage
        give_up_stage_flags(len, at, step_out, sequence);
      }
      last_dispatches_ = sequence_->dispatches_recorded(frame);
      filled_[size_t(sequence)] = at + len;
      if (last && out == vk::ForwardOutput::Argmax) {
        std::memcpy(&last_pick_, model_->pick_host.mapped + 4 * ((at + len - 1) % 2), 4);
        ahead_token_ = std::max(last_pick_, 0);  // what the step ahead reads (argmax.comp)
      }
      const size_t row = size_t(c.vocab_size);
      if (all_logits)
        std::memcpy(logits + size_t(start) * row, model_->logits_host.mapped, size_t(len) * row * 4);
      else if (last && out == vk::ForwardOutput::LastLogits)
        std::memcpy(logits, model_->logits_host.mapped, row * 4);
    }
    if (n == 1) {  // decode: what this step cost beyond the work itself
      const vk::Counters& after = device_->counters();
      decode_.memory_allocations += after.memory_allocations - before.memory_allocations;
      decode_.buffers_created += after.buffers_created - before.buffers_created;
      decode_.descriptor_sets_allocated += after.descriptor_sets_allocated - before.descriptor_sets_allocated;
      decode_.pipelines_created += after.pipelines_created - before.pipelines_created;
      decode_.submits += after.submits - before.submits;
      ++decode_tokens_;
    }
  }

  // forward_embedded's batches: at most max_batch tokens and kMaxAttentionSpans spans each, a span
  // never split (a batch ends before the span that would not fit). Each is recorded on the spot
  // with barriers (soft_embed takes no stage flags). Where a batch holds more rows than the logits
  // buffer, all logits come back logit_rows at a time from its normed output (a real vocabulary
  // leaves 64 rows, shorter than an image).
  void run_embedded(std::span<const int32_t> tokens, int pos, vk::ForwardOutput out, float* logits,
                    std::span<const EmbeddingSpan> spans, int sequence) {
    drop_ahead();
    if (prepared_ >= 0) sequence_->discard(prepared_);
    prepared_ = -1;
    const vk::ModelGpu::SoftTokens& soft = model_->soft_tokens();
    const bool all_logits = out == vk::ForwardOutput::AllLogits;
    const int n = int(tokens.size());
    const size_t hidden = size_t(model_->config.hidden_size), row = size_t(model_->config.vocab_size);
    size_t next = 0;  // the first span not yet run
    for (int start = 0; start < n;) {
      int end = std::min(n, start + model_->max_batch);
      std::vector<vk::BatchSpan> batch;
      for (size_t k = next; k < spans.size() && spans[k].pos - pos < end; ++k) {
        const int first = spans[k].pos - pos;
        if (first + spans[k].count > end || batch.size() == vk::kMaxAttentionSpans) {
          if (first == start) throw Error("Vulkan: a span that fits no batch (internal error)");
          end = first;
          break;
        }
        batch.push_back({first - start, spans[k].count});
      }
      const int len = end - start, at = pos + start;
      // Token ids with -1 at soft tokens (embed.comp skips them); their rows at their batch rows.
      auto* ids = reinterpret_cast<int32_t*>(model_->tokens.mapped);
      std::memcpy(ids, tokens.data() + start, size_t(len) * 4);
      for (size_t i = 0; i < batch.size(); ++i) {
        const vk::BatchSpan& b = batch[i];
        std::fill(ids + b.first, ids + b.first + b.count, -1);
        std::memcpy(soft.rows.mapped + size_t(b.first) * hidden * 4, spans[next + i].rows,
                    size_t(b.count) * hidden * 4);
      }
      next += batch.size();
      const bool last = end == n, slices = all_logits && len > model_->logit_rows;
      const vk::ForwardOutput step_out = slices                ? vk::ForwardOutput::Normed
                                         : last || all_logits ? out
                                                              : vk::ForwardOutput::LastLogits;
      submit_and_wait(record(len, at, step_out, false, batch, sequence));
      filled_[size_t(sequence)] = at + len;
      if (slices) {
        for (int r = 0; r < len; r += model_->logit_rows) {
          const int rows = std::min(model_->logit_rows, len - r);
          const int frame = sequence_->begin(profiling_);
          vk::record_logits(*model_, *sequence_, r, rows);
          sequence_->end();
          submit_and_wait(frame);
          std::memcpy(logits + size_t(start + r) * row, model_->logits_host.mapped, size_t(rows) * row * 4);
        }
      } else if (all_logits) {
        std::memcpy(logits + size_t(start) * row, model_->logits_host.mapped, size_t(len) * row * 4);
      } else if (last) {
        std::memcpy(logits, model_->logits_host.mapped, row * 4);
      }
      start = end;
    }
  }

  void submit_and_wait(int frame) {
    sequence_->submit(frame);
    sequence_->wait(frame);
    last_dispatches_ = sequence_->dispatches_recorded(frame);
  }

  // One batch at load (KernelPlan::warmup_tokens, one token more than the items kernels take, so
  // that it runs the tiles; 0: none). On an H100 the first batch otherwise pays ~140 ms for first
  // use of the batched kernels (27B, 512-token prefill: 1070 tok/s cold, 1545 warm; 8 tokens of
  // warm-up did as well as 512). It writes cache positions that the first real call (at position
  // 0) overwrites.
  void warm_up(int tokens_at_load) {
    const int n = std::min({tokens_at_load, model_->max_batch, model_->context});
    if (n < 2) return;
    std::vector<int32_t> tokens(size_t(n), 0);
    std::vector<float> logits(size_t(model_->config.vocab_size));
    forward(tokens, 0, false, logits.data());
    filled_[0] = 0;
  }

  // The frame recorded ahead, if it is for this step (one token) with today's settings.
  int take_prepared(int sequence, int pos, vk::ForwardOutput out, bool one) {
    const int frame = prepared_;
    prepared_ = -1;
    if (frame >= 0 && one && prepared_seq_ == sequence && prepared_pos_ == pos && prepared_out_ == out && matches(frame))
      return frame;
    if (frame >= 0) sequence_->discard(frame);
    return -1;
  }
  void prepare(int frame, int sequence, int pos, vk::ForwardOutput out) {
    prepared_ = frame;
    prepared_seq_ = sequence;
    prepared_pos_ = pos;
    prepared_out_ = out;
  }
  bool matches(int frame) const {
    return sequence_->profiling(frame) == profiling_ && sequence_->stage_flags(frame) == stage_flags_;
  }

  // A step queued ahead that the caller did not ask for: done before anything else is written.
  void drop_ahead() {
    if (ahead_ < 0) return;
    sequence_->wait(ahead_);
    if (sequence_->abandoned(ahead_)) stop_stage_flags();
    ahead_ = -1;
  }

  int record(int n, int pos, vk::ForwardOutput out, bool stage_flags, std::span<const vk::BatchSpan> spans,
             int sequence) {
    const int frame = sequence_->begin(profiling_, stage_flags);
    vk::record_forward(*model_, *sequence_, n, pos, out, spans, sequence);
    sequence_->end();
    return frame;
  }

  void stop_stage_flags() {
    if (stage_flags_ && stage_flag_fallbacks_++ == 0)  // once, though a step ahead may have given up too
      std::cerr << "kiln: Vulkan stage flags gave up on " << device_->info().report.name
                << "; decoding with barriers from now on\n";
    stage_flags_ = false;
    if (prepared_ >= 0) sequence_->discard(prepared_);
    prepared_ = -1;
  }

  // A stage's wait gave up: the GPU did not run a stage's workgroups while the next one's waited
  // (Vulkan does not promise it). The step's results are garbage; it runs again with barriers,
  // and so does every later step.
  void give_up_stage_flags(int n, int pos, vk::ForwardOutput out, int sequence) {
    stop_stage_flags();
    const int frame = record(n, pos, out, false, {}, sequence);
    sequence_->submit(frame);
    sequence_->wait(frame);
  }

  std::unique_ptr<vk::Device> device_;
  std::unique_ptr<vk::ModelGpu> model_;
  std::unique_ptr<vk::CommandSequence> sequence_;
  vk::Counters after_load_, decode_;
  uint64_t decode_tokens_ = 0;
  std::vector<int> filled_ = {0};  // [sequence]: positions [0, filled) are in its cache
  uint64_t sequence_steps_ = 0;
  int items_prepared_ = -1;  // a step of several sequences recorded ahead, for items_prepared_for_
  std::vector<vk::StepItem> items_prepared_for_;
  bool profiling_ = false;
  // A frame recorded ahead for a decode step of prepared_seq_ at prepared_pos_.
  int prepared_ = -1, prepared_seq_ = 0, prepared_pos_ = -1;
  vk::ForwardOutput prepared_out_ = vk::ForwardOutput::LastLogits;
  // Greedy decoding: a step queued on the GPU at ahead_pos_, to be fed ahead_token_ (run()), where
  // the plan says so (KernelPlan::run_ahead).
  bool run_ahead_ = false;
  int ahead_ = -1, ahead_seq_ = 0, ahead_pos_ = -1;
  int32_t ahead_token_ = -1, last_pick_ = -1;
  uint32_t last_dispatches_ = 0;
  bool stage_flags_ = false;  // one-token steps ordered by stage flags
  uint64_t stage_flag_fallbacks_ = 0;
};

}  // namespace

void check_vulkan_tuning(const VulkanTuning& tuning) { vk::parse_tuning(tuning); }

std::unique_ptr<Backend> make_vulkan_backend(std::shared_ptr<const Gemma3Weights> weights,
                                             const VulkanOptions& options) {
  return std::make_unique<VulkanBackend>(std::move(weights), options);
}

std::unique_ptr<Backend> make_vulkan_backend_releasing(std::shared_ptr<Gemma3Weights> weights,
                                                       const VulkanOptions& options) {
  Gemma3Weights* release = weights.get();
  return std::make_unique<VulkanBackend>(std::move(weights), options, release);
}

}  // namespace kiln
