// Picks the next token from logits: repetition penalty, then temperature, top-k, top-p, min-p.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "kiln/types.h"

namespace kiln {

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);  // seed 0: a random seed
  // `logits` may be modified in place. `history` is every token so far (prompt and generated).
  int32_t sample(std::span<float> logits, std::span<const int32_t> history);
  uint64_t seed() const { return seed_; }
  // sample() is argmax() of the logits as they come (greedy, no repetition penalty): a backend
  // that picks on its device can do it instead (Backend::forward_argmax).
  bool is_plain_argmax() const;

 private:
  SamplingParams params_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // (logit, then probability; id), reused
  std::vector<int32_t> penalized_;                     // distinct recent tokens, reused
};

// Greedy choice: the index of the largest logit (lowest index on ties).
int32_t argmax(std::span<const float> logits);

}  // namespace kiln
