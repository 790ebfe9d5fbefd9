// Sampling under a JSON grammar: the sampler draws as usual and the draw is kept when the matcher
// accepts the token's text; only when it does not is every token checked and the refused ones
// masked, and the sampler draws again. Most steps (inside strings, say) cost one check.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "generate/sampler.h"
#include "grammar/json_matcher.h"

namespace kiln {

struct ConstrainedPickStats {
  uint64_t steps = 0;
  uint64_t full_masks = 0;  // steps where the first draw was refused and the vocabulary was masked
};

// `pieces[id]`: each token's bytes (empty for control tokens); `is_end(id)`: tokens that end the
// generation, allowed only once the document is complete. `logits` is left as it was; `scratch`
// is reused between calls. Throws kiln::Error when no token can continue the document.
int32_t pick_constrained(Sampler& sampler, std::span<const float> logits, std::span<const int32_t> history,
                         const grammar::JsonMatcher& matcher, const std::vector<std::string>& pieces,
                         const std::function<bool(int32_t)>& is_end, std::vector<float>& scratch,
                         ConstrainedPickStats* stats = nullptr);

// Masks (to -inf) every token of `logits` the matcher refuses: the full check pick_constrained falls
// back to, on its own for benchmarks and tests.
void mask_refused(std::span<float> logits, const grammar::JsonMatcher& matcher, const std::vector<std::string>& pieces,
                  const std::function<bool(int32_t)>& is_end);

}  // namespace kiln
