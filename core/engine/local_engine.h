// The Engine implementation: one model, one backend, one KV cache, used from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/engine.h"
#include "model/config.h"
#include "runtime/backend.h"
#include "tokenizer/tokenizer.h"

namespace kiln {

class LocalEngine final : public Engine {
 public:
  LocalEngine(ModelInfo info, Gemma3Config config, Tokenizer tokenizer, std::unique_ptr<Backend> backend);

  const ModelInfo& info() const override { return info_; }
  GenerationStats generate(const std::string& prompt, const GenerateOptions& options,
                           const TokenCallback& on_text) override;
  GenerationStats chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options,
                       const TokenCallback& on_text) override;
  std::vector<std::vector<float>> logits(std::span<const int32_t> tokens, int prefill, int first_row) override;
  std::vector<int32_t> tokenize(const std::string& text, bool add_bos, bool parse_special) const override;
  std::string detokenize(std::span<const int32_t> ids) const override;
  std::vector<int32_t> chat_tokens(const std::vector<ChatMessage>& messages) const override;
  void set_profiling(bool enabled) override;
  void reset() override { cached_.clear(); }

 private:
  GenerationStats run(const std::vector<int32_t>& prompt, const GenerateOptions& options, const TokenCallback& on_text);
  // Feeds prompt tokens the cache lacks; leaves the last position's logits in logits_. Returns how
  // many prompt tokens were reused from the cache.
  int prefill(const std::vector<int32_t>& prompt);
  bool is_end_token(int32_t id, StopReason& reason) const;
  // `id`'s log-probability and the top_count likeliest tokens under the logits in logits_.
  TokenLogprob token_logprob(int32_t id, int top_count) const;
  // Every token's bytes, built on first use (constrained output walks them).
  const std::vector<std::string>& token_pieces();

  ModelInfo info_;
  Gemma3Config config_;
  Tokenizer tokenizer_;
  std::unique_ptr<Backend> backend_;
  std::vector<int32_t> cached_;  // the tokens whose K/V are in the cache, in order
  std::vector<float> logits_;    // [vocab] after the last token fed through forward() (greedy steps
                                 // through forward_argmax leave it behind; prefill refills it)
  bool profiling_ = false;
  std::vector<std::string> pieces_;  // [vocab] token bytes; empty until token_pieces()
};

}  // namespace kiln
