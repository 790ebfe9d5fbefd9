#include "engine/generation.h"

#include "engine/local_engine.h"
#include "generate/constrained_pick.h"

namespace kiln {
namespace {

double ms_between(Generation::Clock::time_point a, Generation::Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

Generation::Generation(LocalEngine& engine, const GenerateOptions& options, TokenCallback on_text,
                       Clock::time_point start)
    : engine_(engine),
      options_(options),
      on_text_(std::move(on_text)),
      sampler_(options.sampling.over(engine.info().sampling_defaults)),
      stops_(options.stop),
      start_(start) {
  // Log-probabilities need the logits on the host, and as the model gave them: the sampler may
  // change its input in place (repetition penalty), so it samples from a copy.
  want_logprobs_ = options.logprobs && options.on_logprob;
  if (options.format == GenerateOptions::Format::JsonObject) matcher_.emplace(grammar::JsonSchema::any_object());
  if (options.format == GenerateOptions::Format::JsonSchema) matcher_.emplace(grammar::JsonSchema::compile(options.json_schema));
  // Greedy decoding where the backend picks on its device: forward_argmax returns the next token
  // and the logits are not read back (PERFORMANCE.md, "Greedy decoding's pick on the GPU").
  device_pick_ = sampler_.is_plain_argmax() && !want_logprobs_ && !matcher_;
}

void Generation::prefilled(int prompt_tokens, int cached_prompt_tokens) {
  stats_.prompt_tokens = prompt_tokens;
  stats_.cached_prompt_tokens = cached_prompt_tokens;
  const double prefill_ms = ms_between(start_, Clock::now());
  const int fed = prompt_tokens - cached_prompt_tokens;
  stats_.prefill_tokens_per_s = prefill_ms > 0 ? fed / (prefill_ms / 1000.0) : 0;
}

void Generation::emit(const std::string& text) {
  if (!text.empty() && on_text_ && !on_text_(text)) callback_stopped_ = true;
}

std::optional<int32_t> Generation::next(std::vector<float>& logits, const std::vector<int32_t>& cached,
                                        std::optional<int32_t> picked, int context) {
  if (options_.cancel.stop_requested() || callback_stopped_) {
    stats_.stop_reason = StopReason::Cancelled;
    return std::nullopt;
  }
  if (stats_.generated_tokens >= options_.max_tokens) {
    stats_.stop_reason = StopReason::MaxTokens;
    return std::nullopt;
  }
  if (int(cached.size()) >= context) {
    stats_.stop_reason = StopReason::ContextFull;
    return std::nullopt;
  }
  if (matcher_ && !matcher_->can_continue()) {  // the document is complete: nothing else may follow
    stats_.stop_reason = StopReason::EndOfTurn;
    return std::nullopt;
  }
  int32_t next = -1;
  if (!picked) engine_.mask_unspeakable(logits);
  if (picked) {
    next = *picked;
  } else if (matcher_) {
    const auto ends = [this](int32_t id) {
      StopReason ignored;
      return engine_.is_end_token(id, ignored);
    };
    next = pick_constrained(sampler_, logits, cached, *matcher_, engine_.token_pieces(), ends, sampled_logits_);
  } else if (want_logprobs_) {
    sampled_logits_ = logits;
    next = sampler_.sample(sampled_logits_, cached);
  } else {
    next = sampler_.sample(logits, cached);
  }
  if (next < 0) throw Error("every logit the model produced is NaN");
  if (stats_.generated_tokens == 0) {
    first_token_at_ = Clock::now();
    stats_.time_to_first_token_ms = ms_between(start_, first_token_at_);
  }
  if (engine_.is_end_token(next, stats_.stop_reason)) return std::nullopt;
  ++stats_.generated_tokens;
  stats_.token_times_ms.push_back(ms_between(start_, Clock::now()));
  const std::string piece = engine_.piece_bytes(next);
  if (want_logprobs_) options_.on_logprob(engine_.token_logprob(logits, next, options_.top_logprobs));
  if (matcher_ && !matcher_->feed(piece))
    throw Error("constrained output: the sampled token does not continue the JSON document");
  emit(stops_.feed(utf8_.feed(piece)));
  if (stops_.stopped()) {
    stats_.stop_reason = StopReason::StopString;
    return std::nullopt;
  }
  // Fed even when it was the last token allowed, so the cache holds everything shown.
  return next;
}

bool Generation::cancelled() const { return options_.cancel.stop_requested() || callback_stopped_; }

GenerationStats Generation::finish() {
  if (stats_.stop_reason == StopReason::None && cancelled()) stats_.stop_reason = StopReason::Cancelled;
  if (stats_.stop_reason != StopReason::StopString) {
    emit(stops_.feed(utf8_.flush()));
    if (!stops_.stopped()) emit(stops_.flush());
  }
  const auto now = Clock::now();
  stats_.total_ms = ms_between(start_, now);
  if (stats_.generated_tokens > 1) {
    const double decode_ms = ms_between(first_token_at_, now);
    stats_.decode_tokens_per_s = decode_ms > 0 ? (stats_.generated_tokens - 1) / (decode_ms / 1000.0) : 0;
  }
  return stats_;
}

}  // namespace kiln
