// One generation's state between forward passes: LocalEngine's decode loop, a token at a time, so
// that the same code decodes one sequence alone (LocalEngine::run) or several slots in one step
// (LocalEngine::step_slots).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "generate/sampler.h"
#include "generate/stop_matcher.h"
#include "grammar/json_matcher.h"
#include "kiln/types.h"

namespace kiln {

class LocalEngine;

class Generation {
 public:
  using Clock = std::chrono::steady_clock;
  // Begun at `start`; throws Error for a schema it cannot compile (before any prefill).
  Generation(LocalEngine& engine, const GenerateOptions& options, TokenCallback on_text, Clock::time_point start);
  // The prompt's images went through the vision tower: `count` of them (cached ones not counted) in
  // `ms`; notes: what the tower's loading had to say (e.g. it stayed on the CPU, and why).
  void encoded_images(int count, double ms, const std::vector<std::string>& notes = {}) {
    stats_.images_encoded = count;
    stats_.image_encode_ms = ms;
    stats_.notes.insert(stats_.notes.end(), notes.begin(), notes.end());
  }
  // The prompt is in the sequence's cache now, `cached_prompt_tokens` of it reused.
  void prefilled(int prompt_tokens, int cached_prompt_tokens);

  // Greedy without logprobs or grammar: the backend may pick on its device (forward_argmax).
  bool device_pick() const { return device_pick_; }

  // The next step: checks the stop conditions, samples from `logits` (the last fed token's; or takes
  // `picked`, a device pick), shows the token's text, and returns the token to feed next (at
  // position cached.size()). nullopt: the generation ended (nothing to feed). `cached`: the tokens
  // in the sequence's cache; `context`: its capacity.
  std::optional<int32_t> next(std::vector<float>& logits, const std::vector<int32_t>& cached,
                              std::optional<int32_t> picked, int context);

  // Its caller asked it to stop: then next() ends it (or, before decoding starts, finish() at once).
  bool cancelled() const;

  // After next() returned nullopt, or cancelled() before the first next(): flushes held-back text
  // and completes the timings.
  GenerationStats finish();

 private:
  void emit(const std::string& text);

  LocalEngine& engine_;
  GenerateOptions options_;
  TokenCallback on_text_;
  Sampler sampler_;
  std::optional<grammar::JsonMatcher> matcher_;
  bool want_logprobs_ = false;
  bool device_pick_ = false;
  std::vector<float> sampled_logits_;
  Utf8Stream utf8_;
  StopMatcher stops_;
  bool callback_stopped_ = false;
  GenerationStats stats_;
  Clock::time_point start_, first_token_at_;
};

}  // namespace kiln
