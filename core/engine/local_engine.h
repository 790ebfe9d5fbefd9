// The Engine implementation: one model, one backend, a KV cache a slot, used from one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/engine.h"
#include "model/config.h"
#include "engine/vision_session.h"
#include "generate/chat_template.h"
#include "runtime/backend.h"
#include "tokenizer/tokenizer.h"

namespace kiln {

class Generation;

class LocalEngine final : public Engine {
 public:
  // vision: the model's tower, or null for a model that cannot see.
  LocalEngine(ModelInfo info, Gemma3Config config, Tokenizer tokenizer, std::unique_ptr<Backend> backend,
              std::unique_ptr<VisionSession> vision = nullptr);
  ~LocalEngine() override;

  const ModelInfo& info() const override { return info_; }
  GenerationStats generate(const std::string& prompt, const GenerateOptions& options,
                           const TokenCallback& on_text) override;
  GenerationStats chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options,
                       const TokenCallback& on_text) override;
  using Engine::logits;
  using Engine::slot_reuse;
  using Engine::slot_start;
  std::vector<std::vector<float>> logits(const Prompt& prompt, int prefill, int first_row) override;
  std::vector<int32_t> tokenize(const std::string& text, bool add_bos, bool parse_special) const override;
  std::string detokenize(std::span<const int32_t> ids) const override;
  Prompt chat_prompt(const std::vector<ChatMessage>& messages) const override;
  void set_profiling(bool enabled) override;
  std::vector<OpTiming> take_profile() override;
  void reset() override;

  int open_slots(int count) override;
  int slot_count() const override { return int(slots_.size()); }
  bool slot_busy(int slot) const override;
  int slot_reuse(int slot, const Prompt& prompt) const override;
  int slot_cached_tokens(int slot) const override {
    return slot >= 0 && size_t(slot) < slots_.size() ? int(slots_[size_t(slot)].cached.size()) : 0;
  }
  void slot_start(int slot, const Prompt& prompt, const GenerateOptions& options, TokenCallback on_text) override;
  std::vector<SlotResult> step_slots() override;

  // For Generation (engine/generation.h).
  bool is_end_token(int32_t id, StopReason& reason) const;
  // `id`'s log-probability and the top_count likeliest tokens under `logits`.
  TokenLogprob token_logprob(const std::vector<float>& logits, int32_t id, int top_count) const;
  std::string piece_bytes(int32_t id) const { return tokenizer_.piece_bytes(id); }
  // Ids past the tokenizer's pieces (the embedding's padding rows, Gemma 3's image token) can never
  // be generated: their logits become -inf.
  void mask_unspeakable(std::vector<float>& logits) const;
  bool speakable(int32_t id) const { return id >= 0 && id < tokenizer_.vocab_size(); }
  // Every token's bytes, built on first use (constrained output walks them).
  const std::vector<std::string>& token_pieces();

 private:
  // One sequence of the backend: slot i is backend sequence i; slot 0 is also the sequence of
  // generate(), chat() and logits().
  struct Slot {
    std::vector<int32_t> cached;  // the tokens whose K/V are in its cache, in order
    std::vector<ImageRun> images; // the images among them (keys only)
    std::vector<float> logits;    // [vocab] after the last token fed (greedy steps through
                                  // forward_argmax leave it behind; prefill refills it)
    std::unique_ptr<Generation> run;  // set while busy
    // A started generation's prompt, fed prefill_chunk tokens a step (step_slots) so that a long
    // prompt does not stall the other slots' decoding; empty once it is in the cache.
    std::vector<int32_t> prompt;
    std::vector<ImageRun> prompt_images;  // its images, those still to feed with their embeddings
    size_t prompt_fed = 0;   // prompt[0, prompt_fed) is in the cache
    int prompt_reused = 0;   // of which this many came from the cache
    uint64_t last_used = 0;
  };
  // Prompt tokens step_slots() prefills a step, over all slots.
  static constexpr size_t kPrefillChunk = 128;
  // Feeds the next chunk of a starting slot's prompt; true once all of it is in.
  bool prefill_step(int slot, size_t budget);

  GenerationStats run(const Prompt& prompt, const GenerateOptions& options, const TokenCallback& on_text);
  // Feeds prompt tokens the slot's cache lacks; leaves the last position's logits in its logits.
  // Returns how many prompt tokens were reused from the cache.
  int prefill(int slot, const std::vector<int32_t>& prompt, std::vector<ImageRun> runs);

  // ---- Images ----
  // The prompt's image runs with their keys (none for a prompt without images). Throws Error for
  // images on a model that cannot see, or runs that do not match the images.
  std::vector<ImageRun> image_runs(const Prompt& prompt) const;
  // How many leading tokens of a prompt the slot's cache can keep: an image run only with the same image.
  size_t reusable(const Slot& s, const std::vector<int32_t>& tokens, const std::vector<ImageRun>& runs) const;
  // Encodes the runs from position `from` on (the others are in the cache already).
  void embed_runs(std::vector<ImageRun>& runs, const std::vector<Image>& images, size_t from,
                  VisionSession::Spent& spent);
  const ImageTokens* image_tokens() const { return vision_ ? &image_tokens_ : nullptr; }
  Error cannot_see() const;  // images for a model without a vision tower: what to do about it
  void check_prompt(const std::vector<int32_t>& prompt) const;
  void refuse_if_serving() const;

  ModelInfo info_;
  Gemma3Config config_;
  Tokenizer tokenizer_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<VisionSession> vision_;  // null: the model cannot see
  ImageTokens image_tokens_;
  std::vector<Slot> slots_;      // at least one
  std::vector<float> step_logits_;  // [busy slots][vocab] of a step_slots() pass
  uint64_t use_clock_ = 0;
  bool profiling_ = false;
  std::vector<std::string> pieces_;  // [vocab] token bytes; empty until token_pieces()
};

}  // namespace kiln
