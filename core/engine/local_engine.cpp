#include "engine/local_engine.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "generate/chat_roll_off.h"
#include "generate/chat_template.h"
#include "generate/constrained_pick.h"
#include "generate/logprobs.h"
#include "generate/sampler.h"
#include "generate/stop_matcher.h"
#include "grammar/json_matcher.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

LocalEngine::LocalEngine(ModelInfo info, Gemma3Config config, Tokenizer tokenizer, std::unique_ptr<Backend> backend)
    : info_(std::move(info)),
      config_(std::move(config)),
      tokenizer_(std::move(tokenizer)),
      backend_(std::move(backend)),
      logits_(config_.vocab_size) {}

std::vector<int32_t> LocalEngine::tokenize(const std::string& text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> ids = tokenizer_.encode(text, parse_special ? SpecialText::Parse : SpecialText::Literal);
  if (add_bos && (ids.empty() || ids.front() != tokenizer_.bos_id())) ids.insert(ids.begin(), tokenizer_.bos_id());
  for (int32_t id : ids)
    if (id < 0 || id >= config_.vocab_size)
      throw Error(tokenizer_.origin() + ": token " + std::to_string(id) + " of the prompt is outside the model's "
                  "vocabulary of " + std::to_string(config_.vocab_size));
  return ids;
}

std::string LocalEngine::detokenize(std::span<const int32_t> ids) const { return tokenizer_.decode(ids); }

std::vector<int32_t> LocalEngine::chat_tokens(const std::vector<ChatMessage>& messages) const {
  return render_chat(tokenizer_, messages);
}

void LocalEngine::set_profiling(bool enabled) {
  profiling_ = enabled;
  backend_->set_profiling(enabled);
}

GenerationStats LocalEngine::generate(const std::string& prompt, const GenerateOptions& options,
                                      const TokenCallback& on_text) {
  return run(tokenize(prompt, true, options.parse_special), options, on_text);
}

GenerationStats LocalEngine::chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options,
                                  const TokenCallback& on_text) {
  if (!options.roll_off_old_turns) return run(chat_tokens(messages), options, on_text);
  FittedChat fitted = fit_chat(tokenizer_, messages, backend_->context_length(), options.max_tokens,
                               options.roll_off_at_least);
  GenerationStats stats = run(fitted.tokens, options, on_text);
  stats.rolled_off_messages = fitted.rolled_off;
  return stats;
}

int LocalEngine::prefill(const std::vector<int32_t>& prompt) {
  // Reuse the longest common prefix. Local layers keep a ring of recent positions, so the cache
  // can step back one position (re-feeding it rewrites the same slot) but no further.
  if (prompt.empty()) throw Error("the prompt has no tokens");
  size_t keep = 0;
  while (keep < cached_.size() && keep < prompt.size() && cached_[keep] == prompt[keep]) ++keep;
  if (keep == prompt.size()) --keep;  // the last prompt token must be fed again for its logits
  if (cached_.size() > keep + 1) keep = 0;
  cached_.resize(keep);
  std::span<const int32_t> rest(prompt.data() + keep, prompt.size() - keep);
  backend_->forward(rest, int(keep), false, logits_.data());
  cached_ = prompt;
  return int(keep);
}

const std::vector<std::string>& LocalEngine::token_pieces() {
  if (pieces_.empty()) {
    pieces_.reserve(size_t(config_.vocab_size));
    for (int32_t id = 0; id < config_.vocab_size; ++id)
      pieces_.push_back(id < tokenizer_.vocab_size() ? tokenizer_.piece_bytes(id) : std::string());
  }
  return pieces_;
}

TokenLogprob LocalEngine::token_logprob(int32_t id, int top_count) const {
  const LogSoftmax log_softmax(logits_);
  TokenLogprob t{id, tokenizer_.piece_bytes(id), log_softmax.of(id), {}};
  for (const auto& [alt, logprob] : log_softmax.top(std::clamp(top_count, 0, 20)))
    t.top.push_back({alt, tokenizer_.piece_bytes(alt), logprob});
  return t;
}

bool LocalEngine::is_end_token(int32_t id, StopReason& reason) const {
  if (id == tokenizer_.end_of_turn_id()) {
    reason = StopReason::EndOfTurn;
    return true;
  }
  if (id == tokenizer_.eos_id() ||
      std::find(config_.eos_token_ids.begin(), config_.eos_token_ids.end(), id) != config_.eos_token_ids.end()) {
    reason = StopReason::EndOfSequence;
    return true;
  }
  return false;
}

GenerationStats LocalEngine::run(const std::vector<int32_t>& prompt, const GenerateOptions& options,
                                 const TokenCallback& on_text) {
  GenerationStats stats;
  stats.prompt_tokens = int(prompt.size());
  const int ctx = backend_->context_length();
  if (int(prompt.size()) >= ctx)
    throw Error("the prompt has " + std::to_string(prompt.size()) + " tokens; the context holds " +
                std::to_string(ctx));
  const auto start = Clock::now();
  if (profiling_) backend_->take_profile();  // drop timings from earlier calls

  stats.cached_prompt_tokens = prefill(prompt);
  const double prefill_ms = ms_since(start);
  const int fed = stats.prompt_tokens - stats.cached_prompt_tokens;
  stats.prefill_tokens_per_s = prefill_ms > 0 ? fed / (prefill_ms / 1000.0) : 0;

  Sampler sampler(options.sampling.over(info_.sampling_defaults));
  // Greedy decoding where the backend picks on its device: forward_argmax returns the next token
  // and logits_ is not read back (PERFORMANCE.md, "Greedy decoding's pick on the GPU").
  // Log-probabilities need the logits on the host, and as the model gave them: the sampler may
  // change its input in place (repetition penalty), so it samples from a copy.
  const bool want_logprobs = options.logprobs && options.on_logprob;
  std::optional<grammar::JsonMatcher> matcher;
  if (options.format == GenerateOptions::Format::JsonObject) matcher.emplace(grammar::JsonSchema::any_object());
  if (options.format == GenerateOptions::Format::JsonSchema) matcher.emplace(grammar::JsonSchema::compile(options.json_schema));
  const auto ends = [this](int32_t id) {
    StopReason ignored;
    return is_end_token(id, ignored);
  };
  const bool device_pick = sampler.is_plain_argmax() && !want_logprobs && !matcher;
  std::vector<float> sampled_logits;
  std::optional<int32_t> picked;
  Utf8Stream utf8;
  StopMatcher stops(options.stop);
  bool callback_stopped = false;
  auto emit = [&](const std::string& text) {
    if (!text.empty() && on_text && !on_text(text)) callback_stopped = true;
  };

  Clock::time_point first_token_at;
  while (true) {
    if (options.cancel.stop_requested() || callback_stopped) {
      stats.stop_reason = StopReason::Cancelled;
      break;
    }
    if (stats.generated_tokens >= options.max_tokens) {
      stats.stop_reason = StopReason::MaxTokens;
      break;
    }
    if (int(cached_.size()) >= ctx) {
      stats.stop_reason = StopReason::ContextFull;
      break;
    }
    if (matcher && !matcher->can_continue()) {  // the document is complete: nothing else may follow
      stats.stop_reason = StopReason::EndOfTurn;
      break;
    }
    int32_t next = -1;
    if (picked) {
      next = *picked;
    } else if (matcher) {
      next = pick_constrained(sampler, logits_, cached_, *matcher, token_pieces(), ends, sampled_logits);
    } else if (want_logprobs) {
      sampled_logits = logits_;
      next = sampler.sample(sampled_logits, cached_);
    } else {
      next = sampler.sample(logits_, cached_);
    }
    if (next < 0) throw Error("every logit the model produced is NaN");
    if (stats.generated_tokens == 0) {
      first_token_at = Clock::now();
      stats.time_to_first_token_ms = ms_since(start);
    }
    if (is_end_token(next, stats.stop_reason)) break;
    ++stats.generated_tokens;
    stats.token_times_ms.push_back(ms_since(start));
    if (want_logprobs) options.on_logprob(token_logprob(next, options.top_logprobs));
    if (matcher && !matcher->feed(tokenizer_.piece_bytes(next)))
      throw Error("constrained output: the sampled token does not continue the JSON document");
    emit(stops.feed(utf8.feed(tokenizer_.piece_bytes(next))));
    if (stops.stopped()) {
      stats.stop_reason = StopReason::StopString;
      break;
    }
    // Feed the token so the cache holds everything shown, even when this was the last one.
    const std::span<const int32_t> fed(&next, 1);
    picked = device_pick ? backend_->forward_argmax(fed, int(cached_.size())) : std::nullopt;
    if (!picked) backend_->forward(fed, int(cached_.size()), false, logits_.data());
    cached_.push_back(next);
  }
  if (stats.stop_reason != StopReason::StopString) {
    emit(stops.feed(utf8.flush()));
    if (!stops.stopped()) emit(stops.flush());
  }
  stats.total_ms = ms_since(start);
  if (stats.generated_tokens > 1) {
    const double decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - first_token_at).count();
    stats.decode_tokens_per_s = decode_ms > 0 ? (stats.generated_tokens - 1) / (decode_ms / 1000.0) : 0;
  }
  if (profiling_) stats.profile = backend_->take_profile();
  stats.notes = backend_->take_notes();
  return stats;
}

std::vector<std::vector<float>> LocalEngine::logits(std::span<const int32_t> tokens, int prefill_count,
                                                    int first_row) {
  const int n = int(tokens.size());
  if (n == 0) return {};
  if (prefill_count <= 0 || prefill_count > n) prefill_count = n;
  first_row = std::clamp(first_row, 0, n - 1);
  const int vocab = config_.vocab_size;
  cached_.clear();
  std::vector<std::vector<float>> rows;
  // The prefill batch. Positions before first_row need no logits; the rest come in slices so that
  // only one slice of all-position logits exists at a time.
  constexpr int kRowsPerSlice = 64;
  int pos = 0;
  if (first_row > 0 && first_row < prefill_count) {
    backend_->forward(tokens.subspan(0, first_row), 0, false, logits_.data());
    pos = first_row;
  }
  if (first_row >= prefill_count) {
    backend_->forward(tokens.subspan(0, prefill_count), 0, false, logits_.data());
    pos = prefill_count;
  }
  std::vector<float> slice;
  while (pos < prefill_count) {
    const int len = pos == 0 ? prefill_count : std::min(kRowsPerSlice, prefill_count - pos);
    slice.resize(size_t(len) * vocab);
    backend_->forward(tokens.subspan(pos, len), pos, true, slice.data());
    for (int t = 0; t < len; ++t) rows.emplace_back(slice.begin() + size_t(t) * vocab, slice.begin() + size_t(t + 1) * vocab);
    pos += len;
  }
  for (int t = prefill_count; t < n; ++t) {
    backend_->forward(tokens.subspan(t, 1), t, false, logits_.data());
    if (t >= first_row) rows.push_back(logits_);
  }
  cached_.assign(tokens.begin(), tokens.end());
  if (!rows.empty()) logits_ = rows.back();
  return rows;
}

}  // namespace kiln
