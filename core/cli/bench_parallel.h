// kiln bench --parallel: N generations decoded together in the engine's slots.
#pragma once

#include <vector>

#include "cli/common.h"

namespace kiln::cli {

// For each count: that many generations of `gen` tokens after random prompts of `prompt_tokens`,
// all started (prefilled) first, then stepped together; prints the aggregate decode tokens/s.
void run_parallel_bench(const ModelFlags& model, const std::vector<int>& counts, int prompt_tokens, int gen, bool json);

}  // namespace kiln::cli
