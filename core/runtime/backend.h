// What runs the forward pass. The engine owns one; CPU and Vulkan implement it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hardware.h"
#include "kiln/types.h"

namespace kiln {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // Runs tokens at positions [pos, pos + n) through the model, writing their K/V into the cache.
  // Positions before pos must already be in the cache. pos may go back at most one position
  // from the cache's end, or to 0 (local layers keep a ring of the last `window` positions).
  // logits: n * vocab floats when all_logits, else vocab floats for the last token.
  virtual void forward(std::span<const int32_t> tokens, int pos, bool all_logits, float* logits) = 0;

  // Soft tokens (an image's): positions [pos, pos + count) of a forward_embedded() call take
  // `rows` ([count][hidden] floats, the projector's output, used as they are: not scaled by
  // sqrt(hidden) as token embeddings are), and attention among them is bidirectional: each also
  // sees the rest of the span after it, on every layer. Behind it a local layer's window still
  // bounds what it sees (transformers 5: (causal or same image) and window), which matters only for
  // a span longer than the window.
  struct EmbeddingSpan {
    int pos = 0;
    int count = 0;
    const float* rows = nullptr;
  };
  // forward_sequence() with spans inside [pos, pos + tokens.size()) (their token ids are ignored),
  // in order, not overlapping. A backend without it throws Error.
  virtual void forward_embedded(int sequence, std::span<const int32_t> tokens, int pos,
                                std::span<const EmbeddingSpan> spans, bool all_logits, float* logits) {
    if (spans.empty()) return forward_sequence(sequence, tokens, pos, all_logits, logits);
    (void)sequence; (void)pos; (void)all_logits; (void)logits;
    throw Error(name() + " cannot take image embeddings");
  }

  // Greedy decoding: forward() of tokens, returning only the index of the largest of the last
  // token's logits (kiln::argmax's rule: the lowest index on ties, NaN never wins, -1 when all are
  // NaN) instead of the logits. nullopt, having run nothing, where the backend cannot pick on its
  // device; the caller then runs forward() and picks on the host. A GPU that picks reads back 4
  // bytes a decode step instead of the whole row of logits.
  virtual std::optional<int32_t> forward_argmax(std::span<const int32_t> tokens, int pos) { return std::nullopt; }

  // ---- Several sequences (the server's slots) ----
  // Independent KV caches, each with its own position; sequence 0 is the one forward() uses.
  // sequences(): how many there are. set_sequences(count) makes `count` (sequence 0 keeps its
  // cache; others start empty) and returns how many it made: backends without support keep 1.
  // Throws Error when memory lacks.
  virtual int sequences() const { return 1; }
  virtual int set_sequences(int count) { (void)count; return 1; }
  // forward() on sequence `sequence`, with the same rules for pos against that sequence's cache.
  virtual void forward_sequence(int sequence, std::span<const int32_t> tokens, int pos, bool all_logits,
                                float* logits) {
    if (sequence != 0) throw Error("this backend holds one sequence, not sequence " + std::to_string(sequence));
    forward(tokens, pos, all_logits, logits);
  }
  // One decode step of several sequences at once: item i feeds `token` to sequence `sequence` at
  // position `pos` (that sequence's next, or its last again). logits: one row of vocab floats per
  // item. Backends that batch it read each weight once for all items; the default runs them one
  // after another. Each sequence appears at most once.
  struct SequenceToken {
    int sequence = 0;
    int32_t token = 0;
    int pos = 0;
  };
  virtual void forward_sequences(std::span<const SequenceToken> items, int vocab, float* logits) {
    for (size_t i = 0; i < items.size(); ++i)
      forward_sequence(items[i].sequence, std::span<const int32_t>(&items[i].token, 1), items[i].pos, false,
                       logits + i * size_t(vocab));
  }

  // How far pos may go back from a sequence's end (1: re-feeding the last position). More lets a
  // follow-up that diverges a few tokens before the end keep the prefix before them.
  virtual int rewind_limit() const { return 1; }

  virtual int context_length() const = 0;
  virtual uint64_t kv_cache_bytes() const = 0;

  // Named counters for benchmarks (e.g. Vulkan allocations during decode). Real values, never constants.
  virtual std::vector<std::pair<std::string, double>> counters() const { return {}; }

  // What the caller should hear about since the last call (e.g. attention fell back from the NPU
  // to the CPU for a request). One line each.
  virtual std::vector<std::string> take_notes() { return {}; }

  // The GPU plan this backend runs (Vulkan: kernels and synchronisation); none on the CPU.
  virtual std::optional<GpuPlan> gpu_plan() const { return std::nullopt; }

  virtual void set_profiling(bool enabled) { (void)enabled; }
  // Timings since the last call, summed per op and layer.
  virtual std::vector<OpTiming> take_profile() { return {}; }
};

}  // namespace kiln
