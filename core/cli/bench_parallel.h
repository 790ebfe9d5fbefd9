// kiln bench --parallel: N generations decoded together in the engine's slots.
#pragma once

#include <vector>

#include "cli/common.h"

namespace kiln::cli {

// For each count: that many generations of `gen` tokens after random prompts of `prompt_tokens`,
// all started (prefilled) first, then stepped together; prints the aggregate decode tokens/s, and
// with `profile` each count's per-op time a step.
void run_parallel_bench(const ModelFlags& model, const std::vector<int>& counts, int prompt_tokens, int gen, bool json,
                        bool profile);

// Time to first token of a request whose first `prefix_tokens` a slot already holds (the request
// before shared them), against the same request cold.
void run_prefix_bench(const ModelFlags& model, int prefix_tokens, int prompt_tokens);

}  // namespace kiln::cli
