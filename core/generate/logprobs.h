// Log-probabilities of a step's tokens as the model gives them: log-softmax of the raw logits at
// temperature 1, before any sampler setting (OpenAI's logprobs report the same quantity).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace kiln {

class LogSoftmax {
 public:
  // logits: [vocab], as the model produced them. NaN entries count as impossible.
  explicit LogSoftmax(std::span<const float> logits);
  float of(int32_t id) const;  // log p(id); -inf for NaN/-inf logits or ids outside the vocabulary
  // The `count` likeliest tokens, best first (lower id first on ties), as (id, log p).
  std::vector<std::pair<int32_t, float>> top(int count) const;

 private:
  std::span<const float> logits_;
  double log_total_ = 0;  // log of sum(exp(logit)), computed relative to the largest logit
};

}  // namespace kiln
